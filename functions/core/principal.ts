import { ForbiddenError } from './errors.js';

/** Permissions carried in the token's space-separated `scope` claim (docs/contract.md, "Authentication and permissions"). */
export const SCOPES = [
  'scenarios:read',
  'scenarios:write',
  'deployments:read',
  'deployments:write',
  'search:read',
  'devices:write',
] as const;

/**
 * What a company id may look like: letters, digits, `.`, `_`, `-`, at most 128 characters, starting with a letter
 * or digit. Tokens carry the caller's companies as a list that API Gateway flattens into one space-separated string,
 * so an id with a space, comma, bracket or quote could not be told apart from two ids.
 */
export const COMPANY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** One permission name. */
export type Scope = (typeof SCOPES)[number];

/** The authenticated caller, derived from a verified JWT. */
export interface Principal {
  /** `sub` claim: the user's identifier (username locally). */
  subject: string;
  /** `companies` claim: company ids the caller may act on. */
  companies: readonly string[];
  /** `scope` claim, split. Unknown scopes are kept but grant nothing. */
  scopes: ReadonlySet<string>;
}

/**
 * Checks that `companyId` is one of the caller's companies. The route's scope is checked before the use case runs
 * (the handler stack, and API Gateway's authorizer on AWS); the use cases check the company they act on.
 * @throws ForbiddenError (403) naming the company.
 */
export function authorizeCompany(principal: Principal, companyId: string): void {
  if (!principal.companies.includes(companyId)) {
    throw new ForbiddenError(`The token does not grant access to company '${companyId}'.`);
  }
}

/**
 * Checks that the caller holds `scope` and, when `companyId` is given, that the company is one of theirs.
 * @throws ForbiddenError (403) naming the missing scope or the company.
 */
export function authorize(principal: Principal, scope: Scope, companyId?: string): void {
  if (!principal.scopes.has(scope)) {
    throw new ForbiddenError(`The token lacks the '${scope}' scope required by this operation.`);
  }
  if (companyId !== undefined) authorizeCompany(principal, companyId);
}
