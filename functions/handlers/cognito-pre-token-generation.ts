import type { PreTokenGenerationV2TriggerEvent } from 'aws-lambda';
import { COMPANIES_ATTRIBUTE, ROLE_ATTRIBUTE, SCOPE_ATTRIBUTE } from '../contract/cognito-attributes.js';
import { isRole, scopeClaimOf } from '../core/access/roles.js';
import { IDENTIFIER_PATTERN } from '../core/shared/identifiers.js';

/** One token's changes in a V2_0 response. */
interface TokenGeneration {
  claimsToAddOrOverride?: Record<string, unknown>;
  claimsToSuppress?: string[];
}

/**
 * The V2_0 pre-token-generation event, as far as this trigger uses it (@types/aws-lambda types claim values as
 * strings only, which is V1_0's limit; V2_0 accepts arrays).
 */
export interface PreTokenGenerationV2Event extends Omit<PreTokenGenerationV2TriggerEvent, 'response'> {
  response: {
    claimsAndScopeOverrideDetails?: {
      idTokenGeneration?: TokenGeneration;
      accessTokenGeneration?: TokenGeneration & { scopesToAdd?: string[]; scopesToSuppress?: string[] };
    } | null;
  };
}

/**
 * What the access token carries for the handlers (functions/platform/auth.ts), from the user's attributes: the
 * company ids (comma-separated, trimmed; an item that is not a company id, e.g. `Acme Corp`, is dropped and logged
 * rather than split into other ids) and the scopes, each once: the role's (scopeClaimOf) when `custom:role` names a
 * role, else the legacy `custom:scope` (split on commas and white space). A `custom:role` that names no role is logged
 * and ignored, so a typo grants no more than the legacy scopes.
 */
export function tokenClaims(attributes: Readonly<Record<string, string>>): { companies: string[]; scopes: string[] } {
  const listed = (attributes[COMPANIES_ATTRIBUTE] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const refused = listed.filter((item) => !IDENTIFIER_PATTERN.test(item));
  if (refused.length > 0) console.warn(JSON.stringify({ level: 'WARN', message: 'Company ids left out of the token', refused }));
  const companies = [...new Set(listed.filter((item) => IDENTIFIER_PATTERN.test(item)))];
  const role = attributes[ROLE_ATTRIBUTE];
  if (role !== undefined && role !== '' && !isRole(role))
    console.warn(JSON.stringify({ level: 'WARN', message: 'Unknown role left out of the token', role }));
  const scopeList = role !== undefined && isRole(role) ? scopeClaimOf(role) : (attributes[SCOPE_ATTRIBUTE] ?? '');
  const scopes = [...new Set(scopeList.split(/[\s,]+/).filter((item) => item !== ''))];
  return { companies, scopes };
}

/**
 * Cognito pre-token-generation trigger (event version V2_0, which customizes access tokens: Essentials or Plus
 * feature plan). The access token, which the token endpoint returns and API Gateway's JWT authorizer verifies, gets
 * the user's scopes (their role's, else the legacy ones: tokenClaims) added to its `scope` claim (the authorizer checks
 * each route's scope there) and `companies`, a JSON array of company ids. The ID token gets neither, and loses the raw
 * `custom:*` attribute claims, so that it passes no route that needs a scope. A user without the attributes gets
 * `companies: []` and no scope: a valid token that grants nothing.
 */
export const handler = async (event: PreTokenGenerationV2Event): Promise<PreTokenGenerationV2Event> => {
  const { companies, scopes } = tokenClaims(event.request.userAttributes);
  event.response = {
    claimsAndScopeOverrideDetails: {
      idTokenGeneration: { claimsToSuppress: [COMPANIES_ATTRIBUTE, SCOPE_ATTRIBUTE, ROLE_ATTRIBUTE] },
      accessTokenGeneration: { claimsToAddOrOverride: { companies }, scopesToAdd: scopes },
    },
  };
  return event;
};
