import { ForbiddenError } from './errors.js';

/**
 * Permissions carried in the token's space-separated `scope` claim (docs/contract.md, "Authentication and permissions").
 * Users are given them through a role (functions/core/access/roles.ts); routes check single scopes.
 */
export const SCOPES = [
  'scenarios:read',
  'scenarios:write',
  'deployments:read',
  'deployments:write',
  'search:read',
  'devices:read',
  'devices:write',
  'users:read',
  'users:write',
  'companies:read',
  'companies:write',
  'webhooks:read',
  'webhooks:write',
  'alerts:read',
  'alerts:write',
] as const;

/**
 * The one scope of a device token (client credentials grant): it opens the device endpoints (`/device/...`) and
 * nothing else, and no user is ever given it, so a user token on a device endpoint and a device token on a user
 * endpoint both lack the route's scope (403).
 */
export const DEVICE_SCOPE = 'device';

/**
 * Claims a device token carries besides `sub` (the device id), `companies` (its one company) and `scope`
 * (DEVICE_SCOPE): the OAuth client id and the id of the credential it was issued for, so that a token of a deleted
 * device, or of a secret replaced since, is refused before it expires.
 */
export const DEVICE_TOKEN_CLAIMS = { clientId: 'client_id', credentialId: 'cred' } as const;

/** One permission name of a user token. */
export type UserScope = (typeof SCOPES)[number];

/** One permission name: a user's, or the device scope. */
export type Scope = UserScope | typeof DEVICE_SCOPE;

/** The device a device token acts as (present only on a principal whose token holds DEVICE_SCOPE). */
export interface DeviceIdentity {
  company: string;
  deviceId: string;
  /** ULID of the credential the token was issued for (`cred` claim). */
  credentialId: string;
}

/** The authenticated caller, derived from a verified JWT. */
export interface Principal {
  /** `sub` claim: the user's identifier (username locally). */
  subject: string;
  /**
   * The user's username: the token's `username` claim (local and Cognito access tokens carry it), else `sub`. Set by
   * principalFromJwt on every principal; absent only on a principal built by hand (actorOf, functions/core/audit/entries.ts, then reads `subject`).
   */
  username?: string;
  /** `companies` claim: company ids the caller may act on. */
  companies: readonly string[];
  /** `scope` claim, split. Unknown scopes are kept but grant nothing. */
  scopes: ReadonlySet<string>;
  /** Set when the token is a device token: the device it acts as. Its scopes are then DEVICE_SCOPE only. */
  device?: DeviceIdentity;
  /**
   * Set when the token is an API client's (client credentials grant, functions/core/clients/tokens.ts): the client it
   * acts as, whose one company is `companies[0]`. Each request checks the client is still enabled with the role.
   */
  apiClient?: { clientId: string /** ISO-8601: the token's `iat`. */; issuedAt: string };
}

/**
 * Checks that `companyId` is one of the caller's companies. The route's scope is checked before the use case runs
 * (the handler stack, and API Gateway's authorizer on AWS); the use cases check the company they act on.
 * @throws ForbiddenError naming the company.
 */
export function authorizeCompany(principal: Principal, companyId: string): void {
  if (!principal.companies.includes(companyId)) {
    throw new ForbiddenError(`The token does not grant access to company '${companyId}'.`);
  }
}

/**
 * Checks that the caller holds `scope` and, when `companyId` is given, that the company is one of theirs.
 * @throws ForbiddenError naming the missing scope or the company.
 */
export function authorize(principal: Principal, scope: Scope, companyId?: string): void {
  if (!principal.scopes.has(scope)) {
    throw new ForbiddenError(`The token lacks the '${scope}' scope required by this operation.`);
  }
  if (companyId !== undefined) authorizeCompany(principal, companyId);
}

/**
 * The device a device-endpoint call acts as.
 * @throws ForbiddenError when the caller is not a device (a user token).
 */
export function deviceOf(principal: Principal): DeviceIdentity {
  if (principal.device === undefined) throw new ForbiddenError('This endpoint is for device tokens (client credentials grant) only.');
  return principal.device;
}
