/**
 * The caller of an administration route as they are now. An access token outlives a change to its user by up to 15
 * minutes (the token lifetime, docs/contract.md "Tokens"): without this check a user disabled, demoted or deleted
 * could keep reading users and the audit log with it, or use it to undo the change (enable themselves again, invite
 * themselves back). Every administration route, read or write, bounds the token by the caller's user first.
 */

import { holdsEveryScopeOf, ROLE_NAMES, ROLES, type Role } from '../access/roles.js';
import { actorOf } from '../audit/entries.js';
import { ForbiddenError } from '../shared/errors.js';
import { authorize, type Principal, type Scope } from '../shared/principal.js';
import type { UserDirectory } from './ports.js';

/** The caller bounded by their user as stored now, and the role they act with. */
export interface CurrentAdministrator {
  /** The token's scopes and companies, less what the user's current role and companies no longer grant. */
  principal: Principal;
  /**
   * The highest role whose every scope the bounded token holds: what the caller acts with now. Neither the user's role
   * alone (a user promoted to platform-admin still acts with their company-admin token) nor the token's alone.
   */
  role: Role;
}

/** The highest role whose every scope `scopes` holds (ROLE_NAMES is lowest first); `viewer` when none is whole. */
function actingRole(scopes: ReadonlySet<string>): Role {
  return [...ROLE_NAMES].reverse().find((role) => holdsEveryScopeOf(scopes, role)) ?? 'viewer';
}

/**
 * Checks that the token holds `scope`, then reads the caller's user (one directory read) and bounds the token by it:
 * their scopes are those of both the token and their current role, their companies those of both (a platform
 * administrator's current role holds every company).
 * @throws ForbiddenError when the token lacks `scope` (before any read); when the caller's user no longer exists or is
 *   disabled; when their current role no longer grants `scope` (a demoted administrator). Nothing is read or changed
 *   beyond the caller's user.
 */
export async function currentAdministrator(
  users: Pick<UserDirectory, 'get'>,
  token: Principal,
  scope: Scope,
): Promise<CurrentAdministrator> {
  authorize(token, scope);
  const caller = await users.get(actorOf(token));
  if (caller === undefined || !caller.enabled) {
    throw new ForbiddenError('Your user is disabled or deleted: your token no longer administers anything. Nothing was read or changed.');
  }
  const current = new Set<string>(ROLES[caller.role]);
  const principal: Principal = {
    ...token,
    // A scope no role grants (none today) is left as the token has it: only the roles' scopes are the directory's to bound.
    scopes: new Set([...token.scopes].filter((held) => current.has(held) || !ROLES['platform-admin'].includes(held as never))),
    companies: token.companies.filter((company) => caller.role === 'platform-admin' || caller.companies.includes(company)),
  };
  if (!principal.scopes.has(scope)) {
    throw new ForbiddenError(
      `Your role is now ${caller.role}, which does not grant '${scope}': your token, issued before the change, no longer does either. Sign in again. Nothing was read or changed.`,
    );
  }
  return { principal, role: actingRole(principal.scopes) };
}
