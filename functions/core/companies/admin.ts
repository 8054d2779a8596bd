/**
 * Companies administration (docs/contract.md, "Companies administration"): a platform administrator creates, lists,
 * reads and changes companies. The routes are not company-scoped: the `companies:read` / `companies:write` scope of
 * the route is the whole permission, checked again here, on the token bounded by the caller's user as it is now
 * (currentAdministrator), so that no other caller reaches the repository, nor one demoted or disabled since their
 * token was issued.
 */
import { auditEntry } from '../audit/entries.js';
import type { Company } from '../shared/companies.js';
import { BadRequestError, ConflictError, NotFoundError } from '../shared/errors.js';
import type { ListParameters, Page } from '../shared/paging.js';
import type { Principal } from '../shared/principal.js';
import { currentAdministrator } from '../users/current-administrator.js';
import type { UserDirectory } from '../users/ports.js';
import type { CompanyAdministration, CompanyChanges, DeviceCounter } from './ports.js';

/** Largest storage quota an administrator may set: 1 TiB, far above any company's scenario archives. */
export const MAX_QUOTA_BYTES = 1024 ** 4;

/**
 * A new company's id: 1 to 128 lower-case letters, digits, `.`, `_` or `-`, starting with a letter or digit. Lower
 * case only, so that two companies never differ by case alone (`ACME` beside `acme`): ids appear in paths, token
 * claims and user records, where usernames are already compared case aside. Ids created before this rule (any case of
 * IDENTIFIER_PATTERN) keep working wherever an existing company is named.
 */
export const NEW_COMPANY_ID_PATTERN = /^[a-z0-9][a-z0-9._-]{0,127}$/;

/** The rule of NEW_COMPANY_ID_PATTERN, as a 400 states it. */
export const NEW_COMPANY_ID_RULE =
  'A new company id is 1 to 128 lower-case letters, digits, ".", "_" or "-", starting with a letter or digit (^[a-z0-9][a-z0-9._-]{0,127}$).';

/**
 * Why `id` cannot be a new company's id (NEW_COMPANY_ID_RULE, and the lower-case id to use when that one would do),
 * or undefined when it can.
 * @example newCompanyIdRefusal('ACME') // "A new company id is … Use 'acme'."
 */
export function newCompanyIdRefusal(id: string): string | undefined {
  if (NEW_COMPANY_ID_PATTERN.test(id)) return undefined;
  const lower = id.toLowerCase();
  return NEW_COMPANY_ID_PATTERN.test(lower) ? `${NEW_COMPANY_ID_RULE} Use '${lower}'.` : NEW_COMPANY_ID_RULE;
}

/** Longest company display name, characters. */
export const MAX_COMPANY_NAME_LENGTH = 100;

/** A company as administration shows it: its storage account, and whether it holds more than its quota. */
export interface AdminCompany extends Company {
  /**
   * True when `usedBytes` is above `quotaBytes` (a quota lowered below what is stored): every upload then answers 413
   * until the quota is raised again.
   */
  overQuota: boolean;
}

/** One company with its device and user counts (`GET /admin/companies/{companyId}`). */
export interface AdminCompanyDetail extends AdminCompany {
  /** Devices the company has registered. */
  deviceCount: number;
  /** Users holding the company. */
  userCount: number;
}

/** The ports of the use cases below. */
export interface CompanyAdminPorts {
  companies: CompanyAdministration;
  /** The caller's user, read to bound their token by what they are now (currentAdministrator). */
  users: Pick<UserDirectory, 'get'>;
}

/** The ports of getCompany: the companies, the device count and the user count. */
export interface CompanyDetailPorts extends CompanyAdminPorts {
  devices: DeviceCounter;
  users: Pick<UserDirectory, 'get' | 'countInCompany'>;
}

/** What creating a company takes. */
export interface NewCompany {
  id: string;
  name: string;
  quotaBytes: number;
}

/** A company's administration view. */
export function adminViewOf(company: Company): AdminCompany {
  return { ...company, overQuota: company.usedBytes > company.quotaBytes };
}

/** What the audit entries of a company change record of it (`before` / `after`): what administration sets. */
export function auditedCompany(company: Pick<Company, 'id' | 'name' | 'quotaBytes'>): Record<string, unknown> {
  return { id: company.id, name: company.name, quotaBytes: company.quotaBytes };
}

/**
 * Creates a company with nothing stored (`usedBytes` 0), recording a `company.created` entry with it.
 * @throws ForbiddenError without `companies:write` (in the token or the caller's current role); BadRequestError when
 *   the id is not lower case (NEW_COMPANY_ID_PATTERN); ConflictError when a company with the id exists, or one whose
 *   id differs by case alone (created before the lower-case rule). Nothing changed, nothing recorded in each case.
 */
export async function createCompany(ports: CompanyAdminPorts, token: Principal, company: NewCompany): Promise<AdminCompany> {
  const { principal } = await currentAdministrator(ports.users, token, 'companies:write');
  const refusal = newCompanyIdRefusal(company.id);
  if (refusal !== undefined) throw new BadRequestError(`${refusal} Nothing was changed.`, [{ path: '/id', message: refusal }]);
  const twin = await companyDifferingByCase(ports.companies, company.id);
  if (twin !== undefined) {
    throw new ConflictError(
      `Company '${twin}' exists, and ids that differ by case alone would name two companies one reads as the same; choose another id. Nothing was changed.`,
    );
  }
  const entry = auditEntry(principal, {
    action: 'company.created',
    target: { kind: 'company', id: company.id },
    companies: [company.id],
    after: auditedCompany(company),
  });
  if (!(await ports.companies.create(company, entry))) {
    throw new ConflictError(`Company '${company.id}' already exists; nothing was changed.`);
  }
  return adminViewOf({ ...company, usedBytes: 0 });
}

/** Companies read per page while looking for an id that differs by case alone. */
const CASE_CHECK_PAGE = 100;

/**
 * The id of an existing company that differs from `id` by case alone (`Acme` for `acme`), or undefined. Only a company
 * created before new ids were lower case can be one; there is no index by lower-case id, so every company is read,
 * page by page (companies are few, and created rarely).
 */
async function companyDifferingByCase(companies: CompanyAdministration, id: string): Promise<string | undefined> {
  const lower = id.toLowerCase();
  let cursor: string | undefined;
  do {
    const page = await companies.list(CASE_CHECK_PAGE, cursor);
    const twin = page.items.find((company) => company.id !== id && company.id.toLowerCase() === lower);
    if (twin !== undefined) return twin.id;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return undefined;
}

/**
 * A page of every company.
 * @throws ForbiddenError without `companies:read` (in the token or the caller's current role); BadRequestError on a
 *   cursor this listing did not issue.
 */
export async function listCompanies(ports: CompanyAdminPorts, token: Principal, paging: ListParameters): Promise<Page<AdminCompany>> {
  await currentAdministrator(ports.users, token, 'companies:read');
  const page = await ports.companies.list(paging.limit, paging.cursor);
  return { items: page.items.map(adminViewOf), nextCursor: page.nextCursor };
}

/**
 * One company with its storage account, device count and user count.
 * @throws ForbiddenError without `companies:read` (in the token or the caller's current role); NotFoundError when it
 *   does not exist.
 */
export async function getCompany(ports: CompanyDetailPorts, token: Principal, companyId: string): Promise<AdminCompanyDetail> {
  await currentAdministrator(ports.users, token, 'companies:read');
  const company = await ports.companies.get(companyId);
  if (company === undefined) throw notFound(companyId);
  const [deviceCount, userCount] = await Promise.all([ports.devices.count(companyId), ports.users.countInCompany(companyId)]);
  return { ...adminViewOf(company), deviceCount, userCount };
}

/**
 * Changes a company's name and/or quota, recording a `company.updated` entry (before and after) with it. A quota below
 * what the company stores is accepted: the answer's `overQuota` says so, and uploads answer 413 from then on (the
 * upload compares with the stored quota).
 * @throws ForbiddenError without `companies:write` (in the token or the caller's current role); NotFoundError when it
 *   does not exist (nothing changed, nothing recorded).
 */
export async function updateCompany(
  ports: CompanyAdminPorts,
  token: Principal,
  companyId: string,
  changes: CompanyChanges,
): Promise<AdminCompany> {
  const { principal } = await currentAdministrator(ports.users, token, 'companies:write');
  const updated = await ports.companies.update(companyId, changes, (before, after) =>
    auditEntry(principal, {
      action: 'company.updated',
      target: { kind: 'company', id: companyId },
      companies: [companyId],
      before: auditedCompany(before),
      after: auditedCompany(after),
    }),
  );
  if (updated === undefined) throw notFound(companyId);
  return adminViewOf(updated);
}

function notFound(companyId: string): NotFoundError {
  return new NotFoundError(`There is no company '${companyId}'.`);
}
