/**
 * Users administration (docs/contract.md, "Users administration"): administrators invite, list, read, change, delete
 * users and reset their passwords, within bounds checked here (the route's `users:read` / `users:write` scope is
 * checked again too):
 * - a platform administrator (a token holding every scope of `platform-admin`) manages every user;
 * - any other administrator (a company admin) manages only users whose role is at most their own and whose companies
 *   (at least one) are all among the token's `companies`, before and after the change; they grant at most their own
 *   role, never `platform-admin`. Users outside those bounds are answered 404 when read (their existence is not
 *   revealed), 403 when a change would take a user outside them;
 * - nobody demotes, disables or deletes the last active platform administrator (enabled, signed in at least once),
 *   and nobody changes their own role or enabled flag or deletes themselves (409): the service always keeps someone
 *   who can administer it;
 * - every request, read or change, is made with the caller's token bounded by their user as it is now
 *   (currentAdministrator): a user disabled, demoted or deleted cannot use a token issued before (valid up to 15
 *   minutes) to read users or to undo that;
 * - a user a platform administrator disabled stays disabled until a platform administrator enables them: a company
 *   administrator can neither enable them, reset their password nor delete them (403 naming who disabled them).
 * Every change is recorded in the audit log right after the directory's change, with the user's views before and
 * after (never a password).
 */
import { administers, holdsEveryScopeOf, isPlatformAdmin, type Role } from '../access/roles.js';
import { actorOf, auditEntry } from '../audit/entries.js';
import type { AuditAction, AuditLog } from '../audit/ports.js';
import type { CompanyRepository } from '../shared/companies.js';
import { BadRequestError, ConflictError, ForbiddenError, NotFoundError } from '../shared/errors.js';
import type { ListingCursors, ListParameters, Page } from '../shared/paging.js';
import { authorize, type Principal } from '../shared/principal.js';
import { type CurrentAdministrator, currentAdministrator } from './current-administrator.js';
import type { DirectoryChanges, DisabledBy, NewUser, User, UserChanges, UserDirectory } from './ports.js';

/** A username: 1 to 128 letters, digits, `.`, `_`, `@` or `-`, starting with a letter or digit (Cognito accepts these). */
export const USERNAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/;

/** Longest email address, characters (RFC 5321's limit on a forward path, less its angle brackets). */
export const MAX_EMAIL_LENGTH = 254;

/** Most companies a user may hold (a token's `companies` claim stays small). */
export const MAX_USER_COMPANIES = 50;

/**
 * Most characters a user's companies take joined by commas: Cognito keeps them in the `custom:companies` attribute,
 * at most 2,048 characters (lib/identity.ts), so 50 ids of up to 39 characters, or fewer longer ones.
 */
export const MAX_COMPANIES_TEXT_LENGTH = 2_048;

/** The ports of the use cases below. */
export interface UserAdminPorts {
  users: UserDirectory;
  /** Whether the companies a user is given exist. */
  companies: Pick<CompanyRepository, 'getMany'>;
  audit: AuditLog;
  /** Signs the listing's cursors (the directory's own position inside). */
  cursors: ListingCursors;
  /** The time of audit entries. @default the system clock */
  now?: () => Date;
}

/** The listing's filter and paging (`GET /admin/users`). */
export interface UserListQuery extends ListParameters {
  /** Only users holding this company; a company admin must name one of theirs. */
  company?: string | undefined;
}

/** What an invitation answers: the user, and locally the temporary password (shown once). */
export interface Invitation {
  user: User;
  /** Locally only: Cognito emails it to the user. */
  temporaryPassword?: string;
}

/** Whether the caller holds every scope of `role`. */
function holdsRole(principal: Principal, role: Role): boolean {
  return holdsEveryScopeOf(principal.scopes, role);
}

/** Whether the caller manages every user (a platform administrator's token). */
function managesEveryone(principal: Principal): boolean {
  return isPlatformAdmin(principal.scopes);
}

/** The same 404 for a user who does not exist and for one outside the caller's bounds. */
function notFound(username: string): NotFoundError {
  return new NotFoundError(`There is no user '${username}' you can administer. List the users of one of your companies to find them.`);
}

/** The user, when the caller may see them. @throws NotFoundError when there is none, or one outside the caller's bounds. */
async function visibleUser(ports: UserAdminPorts, principal: Principal, username: string): Promise<User> {
  const user = USERNAME_PATTERN.test(username) ? await ports.users.get(username) : undefined;
  if (user === undefined || !administers(principal, user.role, user.companies)) throw notFound(username);
  return user;
}

/**
 * Checks that the caller may give `role` and `companies`, and that they make a valid user: the companies exist, and a
 * role other than platform-admin holds at least one.
 * @throws ForbiddenError (outside the caller's bounds) or BadRequestError (no company, an unknown one); nothing changed.
 */
async function checkGrant(ports: UserAdminPorts, principal: Principal, role: Role, companies: readonly string[]): Promise<void> {
  if (!managesEveryone(principal)) {
    if (role === 'platform-admin' || !holdsRole(principal, role)) {
      throw new ForbiddenError(
        `You may give a role up to your own, never platform-admin; '${role}' is not one of them. Nothing was changed.`,
      );
    }
    const foreign = companies.find((company) => !principal.companies.includes(company));
    if (foreign !== undefined) {
      throw new ForbiddenError(
        `Company '${foreign}' is not one of yours (${principal.companies.join(', ') || 'none'}); a user you administer holds only your companies. Nothing was changed.`,
      );
    }
  }
  if (role !== 'platform-admin' && companies.length === 0) {
    throw new BadRequestError(`A ${role} acts on companies: give at least one in 'companies'. Nothing was changed.`, [
      { path: '/companies', message: `A ${role} needs at least one company.` },
    ]);
  }
  const unique = [...new Set(companies)];
  const found = new Set((unique.length === 0 ? [] : await ports.companies.getMany(unique)).map((company) => company.id));
  const unknown = unique.find((company) => !found.has(company));
  if (unknown !== undefined) {
    throw new BadRequestError(`There is no company '${unknown}'; create it first, or name an existing one. Nothing was changed.`, [
      { path: `/companies/${companies.indexOf(unknown)}`, message: `Unknown company '${unknown}'.` },
    ]);
  }
}

/**
 * Refuses to remove the last active platform administrator (demoting, disabling or deleting them): enabled, with a
 * password of their own. An invited one who never signed in does not count: their temporary password lapses.
 */
async function keepAPlatformAdmin(ports: UserAdminPorts, before: User, after: User | undefined): Promise<void> {
  const wasOne = before.role === 'platform-admin' && before.enabled && before.status === 'CONFIRMED';
  const staysOne = after !== undefined && after.role === 'platform-admin' && after.enabled;
  if (wasOne && !staysOne && (await ports.users.countActivePlatformAdmins()) <= 1) {
    throw new ConflictError(
      `'${before.username}' is the last active platform administrator (enabled, with a password of their own): make another user platform-admin, and let them sign in, first. Nothing was changed.`,
    );
  }
}

/**
 * Whether `username` names the caller. Case aside: Cognito's usernames are case-insensitive (the pool signs in
 * `ADMIN` as `admin`), so `ADMIN` must not pass for someone else.
 */
function isCaller(principal: Principal, username: string): boolean {
  return actorOf(principal).toLowerCase() === username.toLowerCase();
}

/** Refuses an administrator's change of their own role or enabled flag, or their own deletion. */
function notOneself(principal: Principal, username: string, what: string): void {
  if (isCaller(principal, username)) {
    throw new ConflictError(`You cannot ${what} yourself; ask another administrator. Nothing was changed.`);
  }
}

/**
 * Refuses a company administrator's enabling, reset or deletion of a user a platform administrator disabled: that
 * decision holds until a platform administrator reverses it (re-inviting a deleted user would undo it too).
 * @throws ForbiddenError naming who disabled the user.
 */
function respectPlatformDisable(principal: Principal, user: User, what: string): void {
  if (user.enabled || user.disabledBy?.role !== 'platform-admin' || managesEveryone(principal)) return;
  throw new ForbiddenError(
    `'${user.username}' was disabled by platform administrator '${user.disabledBy.username}': only a platform administrator can ${what}. Ask one. Nothing was changed.`,
  );
}

/**
 * Who disabled the user after a change of their enabled flag: the caller when they disable an enabled user (or a
 * platform administrator disables one a company administrator disabled); nobody when they are enabled again;
 * undefined to leave it as it is.
 */
function disabledByAfter(caller: CurrentAdministrator, before: User, enabled: boolean | undefined): { disabledBy?: DisabledBy | null } {
  if (enabled === true && !before.enabled) return { disabledBy: null };
  if (enabled !== false) return {};
  const holds = !before.enabled && before.disabledBy?.role === 'platform-admin';
  if (!before.enabled && (holds || caller.role !== 'platform-admin')) return {};
  return { disabledBy: { username: actorOf(caller.principal), role: caller.role } };
}

/** Records the change in the audit log: the views before and after, the companies of both. */
async function record(
  ports: UserAdminPorts,
  principal: Principal,
  action: AuditAction,
  username: string,
  before: User | undefined,
  after: User | undefined,
): Promise<void> {
  const entry = auditEntry(
    principal,
    {
      action,
      target: { kind: 'user', id: username },
      companies: [...(before?.companies ?? []), ...(after?.companies ?? [])],
      ...(before === undefined ? {} : { before: { ...before } }),
      ...(after === undefined ? {} : { after: { ...after } }),
    },
    ports.now?.(),
  );
  await ports.audit.record(entry);
}

/**
 * Invites a user: the directory creates them with a temporary password (Cognito emails it; locally it is answered,
 * to be shown once) and they set their own at their first sign-in.
 * @throws ForbiddenError without `users:write` or outside the caller's bounds; BadRequestError for no company or an
 *   unknown one; ConflictError when the username is taken. Nothing changed in each case.
 */
export async function inviteUser(ports: UserAdminPorts, token: Principal, user: NewUser): Promise<Invitation> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  await checkGrant(ports, principal, user.role, user.companies);
  const created = await ports.users.create({ ...user, companies: [...new Set(user.companies)] });
  if (created === undefined) throw new ConflictError(`User '${user.username}' already exists; nothing was changed.`);
  await record(ports, principal, 'user.invited', user.username, undefined, created.user);
  return created;
}

/** The listing a cursor is bound to: the users listing and its company filter. */
function listingOf(company: string | undefined): string {
  return JSON.stringify(['users', company ?? null]);
}

/**
 * A page of users in username order, those holding `company` when given. A company admin must name one of their
 * companies, and sees only the users within their bounds (a page may then hold fewer than `limit` and still have a
 * next one).
 * @throws ForbiddenError without `users:read`, or for a company admin naming another company; BadRequestError for a
 *   company admin naming none, or a cursor this listing did not issue.
 */
export async function listUsers(ports: UserAdminPorts, token: Principal, query: UserListQuery): Promise<Page<User>> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:read');
  const { company } = query;
  if (!managesEveryone(principal)) {
    if (company === undefined) {
      throw new BadRequestError(`Name one of your companies in 'company' (${principal.companies.join(', ') || 'you have none'}).`, [
        { path: 'company', message: 'A company administrator lists the users of one of their companies.' },
      ]);
    }
    authorize(principal, 'users:read', company);
  }
  let after: string | undefined;
  if (query.cursor !== undefined) {
    const key = ports.cursors.decode(listingOf(company), query.cursor);
    if (typeof key.after !== 'string')
      throw new BadRequestError(
        "'cursor' is not a cursor this listing issued. Pass the 'nextCursor' of the previous page unchanged, with the same company, or start over without cursor.",
        [{ path: 'cursor', message: 'unknown position' }],
      );
    after = key.after;
  }
  const page = await ports.users.list(company === undefined ? {} : { company }, query.limit, after);
  return {
    items: page.items.filter((user) => administers(principal, user.role, user.companies)),
    nextCursor: page.nextCursor === undefined ? null : ports.cursors.encode(listingOf(company), { after: page.nextCursor }),
  };
}

/**
 * One user.
 * @throws ForbiddenError without `users:read`; NotFoundError when there is none, or one outside a company admin's bounds.
 */
export async function getUser(ports: UserAdminPorts, token: Principal, username: string): Promise<User> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:read');
  return visibleUser(ports, principal, username);
}

/**
 * Changes a user's role, companies and/or enabled flag. Disabling ends the user's sessions (their refresh tokens are
 * refused from then on; access tokens already issued live out their 15 minutes).
 * @throws ForbiddenError without `users:write` (in the token or the caller's current role), when the user before or
 *   after the change is outside the caller's bounds, or when a company admin enables a user a platform admin
 *   disabled; NotFoundError when there is none (or outside the bounds); BadRequestError for an empty change, no
 *   company or an unknown one; ConflictError when it would demote or disable the last enabled platform admin, or
 *   disable the caller. Nothing changed in each case.
 */
export async function updateUser(ports: UserAdminPorts, token: Principal, username: string, changes: UserChanges): Promise<User> {
  authorize(token, 'users:write');
  if (changes.role === undefined && changes.companies === undefined && changes.enabled === undefined) {
    throw new BadRequestError('Give `role`, `companies` or `enabled` (or several); nothing was changed.');
  }
  const caller = await currentAdministrator(ports.users, token, 'users:write');
  const { principal } = caller;
  const before = await visibleUser(ports, principal, username);
  if (changes.enabled === true) respectPlatformDisable(principal, before, 'enable them again');
  const wanted: User = {
    ...before,
    ...(changes.role === undefined ? {} : { role: changes.role }),
    ...(changes.companies === undefined ? {} : { companies: [...new Set(changes.companies)] }),
    ...(changes.enabled === undefined ? {} : { enabled: changes.enabled }),
  };
  if (changes.role !== undefined || changes.companies !== undefined) {
    await checkGrant(ports, principal, wanted.role, changes.companies === undefined ? wanted.companies : changes.companies);
  }
  if (changes.enabled !== undefined && changes.enabled !== before.enabled) notOneself(principal, before.username, 'enable or disable');
  if (changes.role !== undefined && changes.role !== before.role) notOneself(principal, before.username, 'change the role of');
  await keepAPlatformAdmin(ports, before, wanted);
  const normalized: DirectoryChanges = {
    ...(changes.role === undefined ? {} : { role: changes.role }),
    ...(changes.companies === undefined ? {} : { companies: wanted.companies }),
    ...(changes.enabled === undefined ? {} : { enabled: changes.enabled }),
    ...disabledByAfter(caller, before, changes.enabled),
  };
  const after = await ports.users.update(username, normalized);
  if (after === undefined) throw notFound(username);
  await record(ports, principal, 'user.updated', before.username, before, after);
  return after;
}

/**
 * Deletes a user and ends their sessions.
 * @throws ForbiddenError without `users:write`, or for a company admin deleting a user a platform admin disabled;
 *   NotFoundError when there is none (or outside a company admin's bounds); ConflictError for the caller themselves or
 *   the last enabled platform admin. Nothing changed in each case.
 */
export async function deleteUser(ports: UserAdminPorts, token: Principal, username: string): Promise<void> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  const before = await visibleUser(ports, principal, username);
  respectPlatformDisable(principal, before, 'delete them');
  notOneself(principal, before.username, 'delete');
  await keepAPlatformAdmin(ports, before, undefined);
  if (!(await ports.users.delete(username))) throw notFound(username);
  await record(ports, principal, 'user.deleted', before.username, before, undefined);
}

/**
 * Gives a user a new temporary password (Cognito emails it; locally it is answered, to be shown once) and ends their
 * sessions; they set their own at their next sign-in. A disabled user is not reset (Cognito refuses to set a disabled
 * user's password; the local directory is held to the same rule): enable them first.
 * @throws ForbiddenError without `users:write`, or for a company admin resetting a user a platform admin disabled;
 *   NotFoundError when there is none (or outside a company admin's bounds); ConflictError when the user is disabled. Nothing changed in each case.
 */
export async function resetUserPassword(
  ports: UserAdminPorts,
  token: Principal,
  username: string,
): Promise<{ temporaryPassword?: string }> {
  const { principal } = await currentAdministrator(ports.users, token, 'users:write');
  const before = await visibleUser(ports, principal, username);
  respectPlatformDisable(principal, before, 'reset their password (after enabling them)');
  if (!before.enabled) {
    throw new ConflictError(
      `'${username}' is disabled: enable them first (enabled: true), then reset their password. Nothing was changed.`,
    );
  }
  const reset = await ports.users.resetPassword(username);
  if (reset === undefined) throw notFound(username);
  const after = (await ports.users.get(username)) ?? { ...before, status: 'FORCE_CHANGE_PASSWORD' };
  await record(ports, principal, 'user.password-reset', before.username, before, after);
  return reset;
}
