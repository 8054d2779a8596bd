import type { PreTokenGenerationV2TriggerEvent } from 'aws-lambda';
import { IDENTIFIER_PATTERN } from '../core/shared/identifiers.js';

/** User attribute holding the user's companies, comma-separated (`acme,globex`); written by administrators only. */
export const COMPANIES_ATTRIBUTE = 'custom:companies';

/** User attribute holding the user's scopes, space-separated (`scenarios:read search:read`). */
export const SCOPE_ATTRIBUTE = 'custom:scope';

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
 * rather than split into other ids) and the scopes (split on commas and white space), each once.
 */
export function tokenClaims(attributes: Readonly<Record<string, string>>): { companies: string[]; scopes: string[] } {
  const listed = (attributes[COMPANIES_ATTRIBUTE] ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  const refused = listed.filter((item) => !IDENTIFIER_PATTERN.test(item));
  if (refused.length > 0) console.warn(JSON.stringify({ level: 'WARN', message: 'Company ids left out of the token', refused }));
  const companies = [...new Set(listed.filter((item) => IDENTIFIER_PATTERN.test(item)))];
  const scopes = [...new Set((attributes[SCOPE_ATTRIBUTE] ?? '').split(/[\s,]+/).filter((item) => item !== ''))];
  return { companies, scopes };
}

/**
 * Cognito pre-token-generation trigger (event version V2_0, which customizes access tokens: Essentials or Plus
 * feature plan). The access token, which the token endpoint returns and API Gateway's JWT authorizer verifies, gets
 * the user's scopes added to its `scope` claim (the authorizer checks each route's scope there) and `companies`, a
 * JSON array of company ids. The ID token gets neither, and loses the raw `custom:*` attribute claims, so that it
 * passes no route that needs a scope. A user without the attributes gets `companies: []` and no scope: a valid token
 * that grants nothing.
 */
export const handler = async (event: PreTokenGenerationV2Event): Promise<PreTokenGenerationV2Event> => {
  const { companies, scopes } = tokenClaims(event.request.userAttributes);
  event.response = {
    claimsAndScopeOverrideDetails: {
      idTokenGeneration: { claimsToSuppress: [COMPANIES_ATTRIBUTE, SCOPE_ATTRIBUTE] },
      accessTokenGeneration: { claimsToAddOrOverride: { companies }, scopesToAdd: scopes },
    },
  };
  return event;
};
