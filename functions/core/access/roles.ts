/**
 * Roles: named sets of the scopes tokens carry (docs/contract.md, "Roles"). A user is given a role; the token still
 * carries the role's scopes, and routes keep checking one scope each, so a role adds no check of its own.
 */
import { SCOPES, type UserScope } from '../shared/principal.js';

/** A role's name, lowest first. */
export type Role = 'viewer' | 'operator' | 'company-admin' | 'platform-admin';

/** `scopes` in the order of SCOPES, so that a role's `scope` claim reads the same as the scope list everywhere. */
const inScopeOrder = (scopes: readonly UserScope[]): readonly UserScope[] => SCOPES.filter((scope) => scopes.includes(scope));

const VIEWER = inScopeOrder(['scenarios:read', 'deployments:read', 'search:read', 'devices:read', 'alerts:read']);
const OPERATOR = inScopeOrder([...VIEWER, 'scenarios:write', 'deployments:write', 'devices:write', 'webhooks:read', 'alerts:write']);
const COMPANY_ADMIN = inScopeOrder([...OPERATOR, 'users:read', 'users:write', 'webhooks:write']);
const PLATFORM_ADMIN = inScopeOrder([...COMPANY_ADMIN, 'companies:read', 'companies:write']);

/**
 * Each role's scopes, each role holding every scope of the roles before it:
 * - `viewer`: every read scope of a company's resources, alerts included;
 * - `operator`: viewer, plus writing scenarios, deployments, devices and alert rules, and reading webhooks;
 * - `company-admin`: operator, plus reading and managing the users of their companies, and managing webhooks;
 * - `platform-admin`: company-admin, plus reading and managing companies (and so every user).
 */
export const ROLES: Readonly<Record<Role, readonly UserScope[]>> = {
  viewer: VIEWER,
  operator: OPERATOR,
  'company-admin': COMPANY_ADMIN,
  'platform-admin': PLATFORM_ADMIN,
};

/** The role names, lowest first. */
export const ROLE_NAMES = Object.keys(ROLES) as Role[];

/** True when `name` is one of the role names. */
export function isRole(name: string): name is Role {
  return (ROLE_NAMES as string[]).includes(name);
}

/** A role's scopes, space-separated, in the order of SCOPES: the `scope` claim a user of the role gets. */
export function scopeClaimOf(role: Role): string {
  return ROLES[role].join(' ');
}

/**
 * The role whose scopes are exactly `scopes` (order and repetitions aside), or undefined when none is: a token holding
 * a role's scopes plus some of the next role's, or a hand-made set, has no role. Unknown scopes count as a difference.
 */
export function roleOf(scopes: Iterable<string>): Role | undefined {
  const held = new Set(scopes);
  for (const role of [...ROLE_NAMES].reverse()) {
    const wanted = ROLES[role];
    if (held.size === wanted.length && wanted.every((scope) => held.has(scope))) return role;
  }
  return undefined;
}

/** Whether `scopes` hold every scope of `role` (a Cognito access token also carries `aws.cognito.signin.user.admin`). */
export function holdsEveryScopeOf(scopes: ReadonlySet<string>, role: Role): boolean {
  return ROLES[role].every((scope) => scopes.has(scope));
}

/** Whether a token's scopes make its holder a platform administrator (they hold every scope of the role, and maybe more). */
export function isPlatformAdmin(scopes: ReadonlySet<string>): boolean {
  return holdsEveryScopeOf(scopes, 'platform-admin');
}

/**
 * The role a user made before roles is shown and bounded as, from their scope list: the lowest role holding every one
 * of their scopes, so that an administrator's bounds never take them for less than their token grants (a viewer's
 * scopes plus `companies:write` is a platform-admin). Scopes no role grants are ignored (they grant nothing).
 */
export function roleCovering(scopes: Iterable<string>): Role {
  const known = new Set<string>(ROLES['platform-admin']);
  const held = [...scopes].filter((scope) => known.has(scope));
  return ROLE_NAMES.find((role) => held.every((scope) => ROLES[role].includes(scope as UserScope))) ?? 'platform-admin';
}

/**
 * Whether the holder of a token (its `scopes` and `companies`) administers a user of `role` and `companies`: a
 * platform administrator every user; anyone else a user of a role whose scopes they all hold, never platform-admin,
 * with at least one company and every company among theirs.
 */
export function administers(
  caller: { scopes: ReadonlySet<string>; companies: readonly string[] },
  role: Role,
  companies: readonly string[],
): boolean {
  if (isPlatformAdmin(caller.scopes)) return true;
  return (
    role !== 'platform-admin' &&
    holdsEveryScopeOf(caller.scopes, role) &&
    companies.length > 0 &&
    companies.every((company) => caller.companies.includes(company))
  );
}
