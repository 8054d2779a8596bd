/**
 * The Cognito pre-token-generation trigger (V2_0 event): `companies` becomes a JSON array and `scope` a
 * space-separated string in the ID token, the shapes functions/platform/auth.ts accepts.
 */
import { describe, expect, it } from 'vitest';
import { handler, type PreTokenGenerationV2Event, tokenClaims } from '../../functions/handlers/cognito-pre-token-generation.js';

function event(userAttributes: Record<string, string>): PreTokenGenerationV2Event {
  return {
    version: '2',
    triggerSource: 'TokenGeneration_Authentication',
    region: 'eu-west-1',
    userPoolId: 'eu-west-1_test',
    userName: 'alice',
    callerContext: { awsSdkVersion: 'aws-sdk-unknown-unknown', clientId: 'client' },
    request: { userAttributes, groupConfiguration: { groupsToOverride: [], iamRolesToOverride: [] } },
    response: { claimsAndScopeOverrideDetails: null },
  } as PreTokenGenerationV2Event;
}

describe('cognito-pre-token-generation', () => {
  it('adds companies as an array and scope as a space-separated string to the ID token, and drops the raw attributes', async () => {
    const result = await handler(event({
      sub: 'f3a1-…', 'cognito:username': 'alice', 'custom:companies': 'acme, globex', 'custom:scope': 'scenarios:read  search:read',
    }));
    expect(result.response.claimsAndScopeOverrideDetails).toEqual({
      idTokenGeneration: {
        claimsToAddOrOverride: { companies: ['acme', 'globex'], scope: 'scenarios:read search:read' },
        claimsToSuppress: ['custom:companies', 'custom:scope'],
      },
    });
  });

  it('gives a user without the attributes an empty array and an empty scope (a valid token that grants nothing)', () => {
    expect(tokenClaims({})).toEqual({ companies: [], scope: '' });
  });

  it('trims, drops empty items and duplicates, and accepts commas between scopes', () => {
    expect(tokenClaims({ 'custom:companies': ',acme,,acme , globex,', 'custom:scope': 'search:read,scenarios:read search:read' })).toEqual({
      companies: ['acme', 'globex'],
      scope: 'search:read scenarios:read',
    });
  });

  it('returns the event it was given (Cognito reads the response from it)', async () => {
    const input = event({ 'custom:companies': 'acme' });
    expect(await handler(input)).toBe(input);
  });
});
