import type { PreTokenGenerationV2TriggerEvent } from 'aws-lambda';

/** User attribute holding the user's companies, comma-separated (`acme,globex`); written by administrators only. */
export const COMPANIES_ATTRIBUTE = 'custom:companies';

/** User attribute holding the user's scopes, space-separated (`scenarios:read search:read`). */
export const SCOPE_ATTRIBUTE = 'custom:scope';

/**
 * The V2_0 pre-token-generation event, as far as this trigger uses it (@types/aws-lambda types claim values as
 * strings only, which is V1_0's limit; V2_0 accepts arrays).
 */
export interface PreTokenGenerationV2Event extends Omit<PreTokenGenerationV2TriggerEvent, 'response'> {
  response: {
    claimsAndScopeOverrideDetails?: {
      idTokenGeneration?: { claimsToAddOrOverride?: Record<string, unknown>; claimsToSuppress?: string[] };
    } | null;
  };
}

/** The claims the handlers read (functions/platform/auth.ts), derived from the user's attributes. */
export function tokenClaims(attributes: Readonly<Record<string, string>>): { companies: string[]; scope: string } {
  const companies = [...new Set((attributes[COMPANIES_ATTRIBUTE] ?? '').split(',').map((item) => item.trim()).filter((item) => item !== ''))];
  const scope = [...new Set((attributes[SCOPE_ATTRIBUTE] ?? '').split(/[\s,]+/).filter((item) => item !== ''))].join(' ');
  return { companies, scope };
}

/**
 * Cognito pre-token-generation trigger (event version V2_0): adds `companies` (a JSON array of company ids) and
 * `scope` (space-separated) to the ID token, which the token endpoint returns, and removes the raw `custom:*`
 * attribute claims. A user without the attributes gets `companies: []` and an empty `scope`: a valid token that
 * grants nothing.
 */
export const handler = async (event: PreTokenGenerationV2Event): Promise<PreTokenGenerationV2Event> => {
  const { companies, scope } = tokenClaims(event.request.userAttributes);
  event.response = {
    claimsAndScopeOverrideDetails: {
      idTokenGeneration: { claimsToAddOrOverride: { companies, scope }, claimsToSuppress: [COMPANIES_ATTRIBUTE, SCOPE_ATTRIBUTE] },
    },
  };
  return event;
};
