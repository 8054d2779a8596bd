/**
 * Reading the audit log (docs/contract.md, "Audit"): a platform administrator reads every entry; a company
 * administrator (`users:read` without the platform role) only the entries concerning one of their companies, named.
 */
import { administers, isPlatformAdmin, isRole } from '../access/roles.js';
import { ForbiddenError } from '../shared/errors.js';
import type { ListParameters, Page } from '../shared/paging.js';
import type { Principal } from '../shared/principal.js';
import { currentAdministrator } from '../users/current-administrator.js';
import type { UserDirectory } from '../users/ports.js';
import type { AuditEntry, AuditFilter, AuditLog } from './ports.js';

/** The ports of listAudit. */
export interface AuditReadPorts {
  audit: AuditLog;
  /** The caller's user, read to bound their token by what they are now (currentAdministrator). */
  users: Pick<UserDirectory, 'get'>;
}

/**
 * A page of the entries matching `filter`, newest first. A platform administrator (a token holding every scope of the
 * `platform-admin` role) may list every entry; anyone else holding `users:read` must name one of their companies in
 * `filter.company`, and sees only the entries of users they administer (and the company's own).
 * The token is bounded by the caller's user as it is now: a user disabled, deleted or demoted since it was issued
 * reads nothing.
 * @throws ForbiddenError without `users:read` (in the token, or in the caller's current role), for a disabled or
 *   deleted caller, or when a caller other than a platform administrator names no company or one not theirs;
 *   BadRequestError on a cursor this listing did not issue.
 */
export async function listAudit(
  ports: AuditReadPorts,
  token: Principal,
  filter: AuditFilter,
  paging: ListParameters,
): Promise<Page<AuditEntry>> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:read');
  if (!isPlatformAdmin(principal.scopes)) {
    if (filter.company === undefined) {
      throw new ForbiddenError(
        `Name one of your companies with 'company' (${principal.companies.join(', ') || 'the token names none'}): only a platform administrator reads every company's entries.`,
      );
    }
    if (!principal.companies.includes(filter.company)) {
      throw new ForbiddenError(
        `The token does not grant access to company '${filter.company}'; name one of your companies with 'company'.`,
      );
    }
  }
  const page = await ports.audit.list(filter, paging.limit, paging.cursor);
  if (isPlatformAdmin(principal.scopes)) return page;
  return { items: page.items.filter((entry) => withinCallersBounds(principal, entry)), nextCursor: page.nextCursor };
}

/**
 * Whether a company administrator may see the entry: a company's, or a user's whose every view (before and after)
 * is a user they administer (a role they hold, never platform-admin, companies all theirs). The users listing answers
 * 404 for the others, so that their existence is not revealed; their entries are left out the same way (a page may
 * then hold fewer entries than `limit`).
 */
function withinCallersBounds(principal: Principal, entry: AuditEntry): boolean {
  if (entry.target.kind !== 'user') return true;
  return [entry.before, entry.after].every((view) => {
    if (view === undefined) return true;
    const { role, companies } = view as { role?: unknown; companies?: unknown };
    return typeof role === 'string' && isRole(role) && Array.isArray(companies) && administers(principal, role, companies as string[]);
  });
}
