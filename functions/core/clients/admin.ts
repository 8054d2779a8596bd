/**
 * API clients administration (docs/contract.md, "API clients"): administrators (`users:read`, `users:write`) create,
 * list, read, change, delete clients and rotate their secrets, within bounds checked here:
 * - a platform administrator (a token holding every scope of `platform-admin`) manages every client;
 * - a company administrator manages only the clients of the token's `companies`: creating one for another company is
 *   403, and another company's client is answered 404 when read or changed, as an unknown one is (its existence is
 *   not revealed).
 * Every request, read or change, is made with the caller's token bounded by their user as it is now
 * (currentAdministrator): an administrator disabled or demoted cannot use a token issued before to create a client,
 * whose secret would outlive their access.
 * A secret is 32 random bytes (base64url), answered once by a create or a rotation and stored only as its scrypt
 * hash. Every change is recorded in the audit log right after the client's write, with the client's views before
 * and after (never a secret or a hash).
 */
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { holdsEveryScopeOf, isPlatformAdmin } from '../access/roles.js';
import { actorOf, auditEntry } from '../audit/entries.js';
import type { AuditAction, AuditLog } from '../audit/ports.js';
import { hashDeviceSecret } from '../devices/tokens.js';
import type { CompanyRepository } from '../shared/companies.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../shared/errors.js';
import { laterThan } from '../shared/instants.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorize, type Principal } from '../shared/principal.js';
import { currentAdministrator } from '../users/current-administrator.js';
import type { UserDirectory } from '../users/ports.js';
import {
  API_CLIENT_ID_PREFIX,
  type ApiClient,
  type ApiClientRole,
  MAX_API_CLIENTS_PER_COMPANY,
  MAX_PREVIOUS_SECRET_SECONDS,
  type StoredApiClient,
} from './model.js';
import type { ApiClientStore } from './ports.js';

/** What the use cases below need. */
export interface ApiClientAdminPorts {
  clients: ApiClientStore;
  /** The callers' users as they are now: every request bounds the token by its caller (currentAdministrator). */
  users: Pick<UserDirectory, 'get'>;
  /** Whether the company a client is created for exists. */
  companies: Pick<CompanyRepository, 'get'>;
  audit: AuditLog;
  /** The time of changes and audit entries. @default the system clock */
  now?: () => Date;
  /** `count` random bytes (a secret's). @default crypto.randomBytes */
  random?: (count: number) => Uint8Array;
}

/** A new client (the create route's validated body). */
export interface ApiClientRequest {
  name: string;
  company: string;
  role: ApiClientRole;
}

/** A change of a client (the PATCH route's validated body): each member present is replaced. */
export interface ApiClientChange {
  name?: string | undefined;
  role?: ApiClientRole | undefined;
  enabled?: boolean | undefined;
}

/** A client with its new secret: the answer of a create or a rotation, the only ones that show it. */
export type ApiClientWithSecret = ApiClient & { clientSecret: string };

/** The listing's filter and paging (`GET /admin/api-clients`). */
export interface ApiClientListQuery extends ListParameters {
  /** Only this company's clients; a company administrator of several companies names one of theirs. */
  company?: string | undefined;
}

/** Bytes of randomness in a secret: 256 bits, 43 base64url characters. */
const SECRET_BYTES = 32;

/** Attempts of a change that loses compare-and-set races before it gives up with a conflict. */
const CHANGE_ATTEMPTS = 3;

/** A new client secret: base64url of SECRET_BYTES random bytes. */
export function newClientSecret(random: (count: number) => Uint8Array = randomBytes): string {
  return Buffer.from(random(SECRET_BYTES)).toString('base64url');
}

/** The client as answered: what ApiClient holds, never its hashes nor what only the token checks read. */
export function apiClientView(client: StoredApiClient): ApiClient {
  const { clientId, name, company, role, enabled, created, createdBy, updated, lastUsedAt, previousSecretExpiresAt } = client;
  return {
    ...{ clientId, name, company, role, enabled, created, createdBy, updated },
    ...(lastUsedAt === undefined ? {} : { lastUsedAt }),
    ...(previousSecretExpiresAt === undefined ? {} : { previousSecretExpiresAt }),
  };
}

/** Whether the caller manages every client (a platform administrator's token). */
function managesEveryone(principal: Principal): boolean {
  return isPlatformAdmin(principal.scopes);
}

/** The same 404 for a client that does not exist and for one outside the caller's companies. */
function notFound(clientId: string): NotFoundError {
  return new NotFoundError(
    `There is no API client '${clientId}' you can administer. List the clients of one of your companies to find it.`,
  );
}

/** The client, when the caller may see it. @throws NotFoundError when there is none, or one of another company. */
async function visibleClient(
  ports: Pick<ApiClientAdminPorts, 'clients'>,
  principal: Principal,
  clientId: string,
): Promise<StoredApiClient> {
  const client = await ports.clients.get(clientId);
  if (client === undefined || !(managesEveryone(principal) || principal.companies.includes(client.company))) throw notFound(clientId);
  return client;
}

/** @throws ForbiddenError when a company administrator gives a role whose scopes they do not all hold. */
function checkRole(principal: Principal, role: ApiClientRole): void {
  if (!managesEveryone(principal) && !holdsEveryScopeOf(principal.scopes, role)) {
    throw new ForbiddenError(`You may give a client a role up to your own; '${role}' is not one of them. Nothing was changed.`);
  }
}

/** What a client's audit entries record of it (`before` / `after`): what administration sets, never a secret. */
function auditedValues(client: StoredApiClient): Record<string, unknown> {
  return {
    name: client.name,
    company: client.company,
    role: client.role,
    enabled: client.enabled,
    ...(client.previousSecretExpiresAt === undefined ? {} : { previousSecretExpiresAt: client.previousSecretExpiresAt }),
  };
}

/** Records the change in the audit log: the client's values before and after, its company. */
async function record(
  ports: Pick<ApiClientAdminPorts, 'audit'>,
  principal: Principal,
  action: AuditAction,
  at: Date,
  values: { before?: StoredApiClient; after?: StoredApiClient },
): Promise<void> {
  const client = (values.after ?? values.before) as StoredApiClient;
  const entry = auditEntry(
    principal,
    {
      action,
      target: { kind: 'api-client', id: client.clientId },
      companies: [client.company],
      ...(values.before === undefined ? {} : { before: auditedValues(values.before) }),
      ...(values.after === undefined ? {} : { after: auditedValues(values.after) }),
    },
    at,
  );
  await ports.audit.record(entry);
}

/**
 * Checks that the caller may create a client for `company`, and that it exists.
 * @throws ForbiddenError for a company administrator's other company; BadRequestError naming an unknown company.
 */
async function checkCompany(ports: Pick<ApiClientAdminPorts, 'companies'>, principal: Principal, company: string): Promise<void> {
  if (!managesEveryone(principal) && !principal.companies.includes(company)) {
    throw new ForbiddenError(
      `Company '${company}' is not one of yours (${principal.companies.join(', ') || 'none'}); create clients for your companies only. Nothing was created.`,
    );
  }
  if ((await ports.companies.get(company)) === undefined) {
    throw new BadRequestError(`There is no company '${company}'; create it first, or name an existing one. Nothing was created.`, [
      { path: '/company', message: `Unknown company '${company}'.` },
    ]);
  }
}

/**
 * Creates a client, enabled, with a new secret (answered here only, stored as its hash).
 * @throws ForbiddenError without `users:write` (in the token or the caller's current role), for another company than a
 *   company administrator's, or a role above theirs; BadRequestError for an unknown company; ConflictError when the
 *   company already has MAX_API_CLIENTS_PER_COMPANY clients. Nothing created in each case.
 */
export async function createApiClient(
  ports: ApiClientAdminPorts,
  token: Principal,
  request: ApiClientRequest,
): Promise<ApiClientWithSecret> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  checkRole(principal, request.role);
  await checkCompany(ports, principal, request.company);
  const at = ports.now?.() ?? new Date();
  const now = at.toISOString();
  const clientSecret = newClientSecret(ports.random);
  const client: StoredApiClient = {
    clientId: `${API_CLIENT_ID_PREFIX}${ulid(at.getTime())}`,
    name: request.name,
    company: request.company,
    role: request.role,
    enabled: true,
    created: now,
    createdBy: actorOf(principal),
    updated: now,
    secretHash: await hashDeviceSecret(clientSecret),
  };
  if ((await ports.clients.create(client, MAX_API_CLIENTS_PER_COMPANY)) === 'full') {
    throw new ConflictError(
      `Company '${request.company}' already has ${MAX_API_CLIENTS_PER_COMPANY} API clients, the most it may have; nothing was created. Delete one it no longer uses (see each client's lastUsedAt).`,
    );
  }
  await record(ports, principal, 'api-client.created', at, { after: client });
  return { ...apiClientView(client), clientSecret };
}

/**
 * The company a listing reads: the one named; for a company administrator naming none, their only company.
 * @throws ForbiddenError for a company administrator naming another company; BadRequestError for one of several
 *   companies naming none.
 */
function listedCompany(principal: Principal, company: string | undefined): string | undefined {
  if (managesEveryone(principal)) return company;
  if (company === undefined) {
    const [only, ...others] = principal.companies;
    if (only !== undefined && others.length === 0) return only;
    throw new BadRequestError(`Name one of your companies in 'company' (${principal.companies.join(', ') || 'you have none'}).`, [
      { path: 'company', message: 'A company administrator of several companies lists the clients of one of them.' },
    ]);
  }
  authorize(principal, 'users:read', company);
  return company;
}

/**
 * A page of clients in id (creation) order: of `company` when given; else every client for a platform
 * administrator, the clients of their one company for a company administrator.
 * @throws ForbiddenError without `users:read` (in the token or the caller's current role), or for a company
 *   administrator's other company; BadRequestError for a company administrator of several companies naming none,
 *   or a cursor this listing did not issue.
 */
export async function listApiClients(
  ports: Pick<ApiClientAdminPorts, 'clients' | 'users'>,
  token: Principal,
  query: ApiClientListQuery,
): Promise<Page<ApiClient>> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:read');
  const company = listedCompany(principal, query.company);
  const page = await ports.clients.list(company, query.limit, query.cursor);
  return { items: page.items.map(apiClientView), nextCursor: page.nextCursor };
}

/**
 * One client.
 * @throws ForbiddenError without `users:read` (in the token or the caller's current role); NotFoundError when there
 *   is none, or one of another company than a company administrator's.
 */
export async function getApiClient(
  ports: Pick<ApiClientAdminPorts, 'clients' | 'users'>,
  token: Principal,
  clientId: string,
): Promise<ApiClient> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:read');
  return apiClientView(await visibleClient(ports, principal, clientId));
}

/**
 * Applies `change` to the client as it is now, with one compare-and-set on its `updated`, read again and retried when
 * another change won meanwhile; then records `action`.
 * @throws NotFoundError when it is gone (or not visible to the caller); ConflictError after CHANGE_ATTEMPTS lost races.
 */
async function changeApiClient(
  ports: ApiClientAdminPorts,
  principal: Principal,
  target: { clientId: string; action: AuditAction },
  change: (client: StoredApiClient, now: Date) => StoredApiClient,
): Promise<StoredApiClient> {
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
    const before = await visibleClient(ports, principal, target.clientId);
    const now = ports.now?.() ?? new Date();
    const after = { ...change(before, now), updated: laterThan(before.updated, now) };
    if (await ports.clients.replace(after, before.updated)) {
      await record(ports, principal, target.action, now, { before, after });
      return after;
    }
  }
  throw new ConflictError(
    `API client '${target.clientId}' kept changing while this change was applied; nothing was changed. Read it and try again.`,
  );
}

/**
 * Renames a client, changes its role, or disables or enables it. A disabled client gets no token, and its live tokens
 * stop within API_CLIENT_RECHECK_MS; a lower role takes effect in the same time.
 * @throws ForbiddenError without `users:write` (in the token or the caller's current role), or for a role above a
 *   company administrator's; BadRequestError for an empty change; NotFoundError when there is none (or another
 *   company's); ConflictError when concurrent changes keep winning. Nothing changed in each case.
 */
export async function updateApiClient(
  ports: ApiClientAdminPorts,
  token: Principal,
  clientId: string,
  change: ApiClientChange,
): Promise<ApiClient> {
  authorize(token, 'users:write');
  if (change.name === undefined && change.role === undefined && change.enabled === undefined) {
    throw new BadRequestError('Give `name`, `role` or `enabled` (or several); nothing was changed.');
  }
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  if (change.role !== undefined) checkRole(principal, change.role);
  const changed = await changeApiClient(ports, principal, { clientId, action: 'api-client.updated' }, (client, now) => ({
    ...client,
    ...(change.name === undefined ? {} : { name: change.name }),
    ...(change.role === undefined ? {} : { role: change.role }),
    ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
    // A disable ends every live token for good: enabling the client again brings none back.
    ...(change.enabled === false && client.enabled ? { tokensNotBefore: now.toISOString() } : {}),
  }));
  return apiClientView(changed);
}

/**
 * Rotates a client's secret: the new one (answered here only) works from now on, and the one it replaces keeps
 * working for `previousSecretValidSeconds` (`previousSecretExpiresAt`; none when 0), so that a deployment can roll the
 * new secret out first. A previous secret still in its overlap is dropped: only the last two secrets ever work. With
 * 0, every token issued until now stops too (`tokensNotBefore`: within API_CLIENT_RECHECK_MS).
 * @param previousSecretValidSeconds 0 to MAX_PREVIOUS_SECRET_SECONDS (the route validates it); the default is the most.
 * @throws ForbiddenError without `users:write` (in the token or the caller's current role); NotFoundError when there is
 *   none (or another company's); ConflictError when concurrent changes keep winning.
 */
export async function rotateApiClientSecret(
  ports: ApiClientAdminPorts,
  token: Principal,
  clientId: string,
  previousSecretValidSeconds: number = MAX_PREVIOUS_SECRET_SECONDS,
): Promise<ApiClientWithSecret> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  const clientSecret = newClientSecret(ports.random);
  const secretHash = await hashDeviceSecret(clientSecret);
  const changed = await changeApiClient(ports, principal, { clientId, action: 'api-client.secret-rotated' }, (client, now) => {
    const { previousSecretHash: _hash, previousSecretExpiresAt: _expires, ...rest } = client;
    // No overlap is the answer to a leaked secret: the tokens it got end too.
    if (previousSecretValidSeconds <= 0) return { ...rest, secretHash, tokensNotBefore: now.toISOString() };
    const expires = new Date(now.getTime() + previousSecretValidSeconds * 1000).toISOString();
    return { ...rest, secretHash, previousSecretHash: client.secretHash, previousSecretExpiresAt: expires };
  });
  return { ...apiClientView(changed), clientSecret };
}

/**
 * Deletes a client: its next token request is refused, and its live tokens stop within API_CLIENT_RECHECK_MS.
 * @throws ForbiddenError without `users:write` (in the token or the caller's current role); NotFoundError when there is
 *   none (or another company's).
 */
export async function deleteApiClient(ports: ApiClientAdminPorts, token: Principal, clientId: string): Promise<void> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  await visibleClient(ports, principal, clientId);
  const deleted = await ports.clients.delete(clientId);
  if (deleted === undefined) throw notFound(clientId);
  await record(ports, principal, 'api-client.deleted', ports.now?.() ?? new Date(), { before: deleted });
}
