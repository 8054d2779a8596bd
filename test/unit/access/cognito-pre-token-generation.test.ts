/**
 * The Cognito pre-token-generation trigger (V2_0 event): the access token gets the user's scopes (`scopesToAdd`, so
 * that API Gateway's JWT authorizer finds them in its `scope` claim) — their role's, else the legacy `custom:scope` —
 * and `companies` as a JSON array, the shape functions/platform/auth.ts reads; the ID token gets neither.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ROLES, scopeClaimOf } from '../../../functions/core/access/roles.js';
import { handler, type PreTokenGenerationV2Event, tokenClaims } from '../../../functions/handlers/cognito-pre-token-generation.js';

function event(userAttributes: Record<string, string>): PreTokenGenerationV2Event {
  return {
    version: '2',
    triggerSource: 'TokenGeneration_Authentication',
    region: 'eu-west-1',
    userPoolId: 'eu-west-1_test',
    userName: 'alice',
    callerContext: { awsSdkVersion: 'aws-sdk-unknown-unknown', clientId: 'client' },
    request: {
      userAttributes,
      groupConfiguration: { groupsToOverride: [], iamRolesToOverride: [] },
      scopes: ['aws.cognito.signin.user.admin'],
    },
    response: { claimsAndScopeOverrideDetails: null },
  } as PreTokenGenerationV2Event;
}

describe('cognito-pre-token-generation', () => {
  it('adds the scopes and companies (an array) to the access token, and only drops the raw attributes from the ID token', async () => {
    const result = await handler(
      event({
        sub: 'f3a1-…',
        'cognito:username': 'alice',
        'custom:companies': 'acme, globex',
        'custom:scope': 'scenarios:read  search:read',
      }),
    );
    expect(result.response.claimsAndScopeOverrideDetails).toEqual({
      idTokenGeneration: { claimsToSuppress: ['custom:companies', 'custom:scope', 'custom:role'] },
      accessTokenGeneration: { claimsToAddOrOverride: { companies: ['acme', 'globex'] }, scopesToAdd: ['scenarios:read', 'search:read'] },
    });
  });

  it('gives a user without the attributes no company and no scope (a valid token that grants nothing)', async () => {
    expect(tokenClaims({})).toEqual({ companies: [], scopes: [] });
    const result = await handler(event({ sub: 'f3a1-…' }));
    expect(result.response.claimsAndScopeOverrideDetails?.accessTokenGeneration).toEqual({
      claimsToAddOrOverride: { companies: [] },
      scopesToAdd: [],
    });
  });

  it('trims, drops empty items and duplicates, and accepts commas between scopes', () => {
    expect(tokenClaims({ 'custom:companies': ',acme,,acme , globex,', 'custom:scope': 'search:read,scenarios:read search:read' })).toEqual({
      companies: ['acme', 'globex'],
      scopes: ['search:read', 'scenarios:read'],
    });
  });

  it('returns the event it was given (Cognito reads the response from it)', async () => {
    const input = event({ 'custom:companies': 'acme' });
    expect(await handler(input)).toBe(input);
  });
});

describe('company ids in the token', () => {
  it('keeps only ids that survive API Gateway flattening the list: an id with a space is left out, not split into two', () => {
    expect(tokenClaims({ 'custom:companies': 'acme, Acme Corp,globex,acme', 'custom:scope': 'search:read' }).companies).toEqual([
      'acme',
      'globex',
    ]);
  });
});

describe('roles in the token', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("gives a user with a role exactly the role's scopes, whatever their legacy scopes say", async () => {
    const result = await handler(
      event({ 'custom:role': 'company-admin', 'custom:companies': 'acme', 'custom:scope': 'companies:write scenarios:read' }),
    );
    const access = result.response.claimsAndScopeOverrideDetails?.accessTokenGeneration;
    expect(access?.scopesToAdd).toEqual([...ROLES['company-admin']]);
    expect(access?.scopesToAdd?.join(' ')).toBe(scopeClaimOf('company-admin'));
    expect(access?.scopesToAdd).not.toContain('companies:write');
    expect(access?.claimsToAddOrOverride).toEqual({ companies: ['acme'] });
    // The ID token carries none of the attributes that grant anything.
    expect(result.response.claimsAndScopeOverrideDetails?.idTokenGeneration?.claimsToSuppress).toEqual(
      expect.arrayContaining(['custom:role', 'custom:companies', 'custom:scope']),
    );
  });

  it('gives each role its scopes: a platform admin manages companies, a viewer only reads', () => {
    expect(tokenClaims({ 'custom:role': 'platform-admin' }).scopes).toEqual(expect.arrayContaining(['companies:write', 'users:write']));
    expect(tokenClaims({ 'custom:role': 'viewer' }).scopes.every((scope) => scope.endsWith(':read'))).toBe(true);
  });

  it('falls back to the legacy scopes when custom:role names no role, and logs the unknown role', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    expect(tokenClaims({ 'custom:role': 'superuser', 'custom:scope': 'search:read' }).scopes).toEqual(['search:read']);
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('superuser'));
    expect(tokenClaims({ 'custom:role': 'superuser' }).scopes).toEqual([]);
  });
});
