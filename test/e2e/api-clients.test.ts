/**
 * API clients end to end over the local runtime, as an integrator meets them: root creates an operator client for
 * acme; `openid-client` (a library we did not write) configures itself from the authentication address's discovery
 * document alone and gets a token with the client credentials grant; the token searches and deploys in acme and is
 * refused in globex and on the administration; a viewer client cannot deploy; after a rotation both secrets work until
 * the overlap ends and only the new one after; a disabled client gets `invalid_client` and its live token stops
 * within a minute; a company admin of acme cannot create a client of globex. Every answer of the typed client is checked against the OpenAPI document.
 */
import * as oauth from 'openid-client';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { clientFor, eventually, expectError, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root'] });
const as = (token: string) => clientFor(local.service, token).main;

/** A client's token from the discovery document alone: the library finds the token endpoint and authenticates. */
async function tokenOf(clientId: string, clientSecret: string, scope?: string): Promise<string> {
  const configuration = await oauth.discovery(new URL(local.service.auth), clientId, clientSecret, oauth.ClientSecretBasic(clientSecret), {
    execute: [oauth.allowInsecureRequests],
  });
  const tokens = await oauth.clientCredentialsGrant(configuration, scope === undefined ? {} : { scope });
  return tokens.access_token;
}

/**
 * The OAuth error code of a refused client credentials request: a refused HTTP Basic client is answered with its
 * `WWW-Authenticate: Basic` challenge (RFC 6749 §5.2), which `openid-client` throws as such, the body unread.
 */
async function refusedWith(clientId: string, clientSecret: string): Promise<string> {
  const error = await tokenOf(clientId, clientSecret).catch((caught: unknown) => caught);
  expect(error).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
  const challenge = error as oauth.WWWAuthenticateChallengeError;
  expect(challenge.cause.map((item) => item.scheme)).toEqual(['basic']);
  return ((await challenge.response.json()) as { error: string }).error;
}

async function createClient(name: string, role: 'viewer' | 'operator', company = 'acme') {
  const created = await as(local.tokens.root).POST('/admin/api-clients', { body: { name, company, role } });
  expect(created.response.status).toBe(201);
  return expectOk(created);
}

const searchIn = (token: string, company: string) =>
  as(token).GET('/resources/search', { params: { query: { company, type: 'DEVICE' } as never } });

const deploy = (token: string) =>
  as(token).POST('/companies/{companyId}/resources/deployments', {
    params: { path: { companyId: 'acme' } },
    body: {
      requests: [
        {
          target: { type: 'DEVICE', id: 'acme-kiosk-0001' },
          what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
          action: 'DEPLOY',
        },
      ],
    },
  });

let operator: { clientId: string; clientSecret: string };

beforeAll(async () => {
  operator = await createClient('Store back office', 'operator');
}, 60_000);

describe('an API client of acme', () => {
  it('configures a standard OAuth library from the discovery document, and its token acts in acme only', async () => {
    const discovered = await (await fetch(`${local.service.auth}/.well-known/oauth-authorization-server`)).json();
    expect(discovered).toMatchObject({
      issuer: local.service.auth,
      token_endpoint: `${local.service.auth}/token`,
      grant_types_supported: expect.arrayContaining(['client_credentials']),
      token_endpoint_auth_methods_supported: expect.arrayContaining(['client_secret_basic', 'client_secret_post']),
    });
    expect(await (await fetch(`${local.service.auth}/.well-known/openid-configuration`)).json()).toEqual(discovered);

    const token = await tokenOf(operator.clientId, operator.clientSecret);
    expect(expectOk(await searchIn(token, 'acme')).total).toBeGreaterThan(0);
    expect((await deploy(token)).response.status).toBeLessThan(300);
    expectError(await searchIn(token, 'globex'), 403);
    expectError(await as(token).GET('/admin/users', {}), 403);
    expectError(await as(token).GET('/admin/api-clients', {}), 403);
    // What it writes is audited under its own name.
    const rule = expectOk(
      await as(token).POST('/companies/{companyId}/alert-rules', {
        params: { path: { companyId: 'acme' } },
        body: { name: 'Back office watch', query: 'health.versionCode=backoffice-1', condition: { type: 'DISCONNECTED_FOR', minutes: 15 } },
      }),
    );
    expect(rule.by).toBe(`client:${operator.clientId}`);
    const used = expectOk(
      await as(local.tokens.root).GET('/admin/api-clients/{clientId}', { params: { path: { clientId: operator.clientId } } }),
    );
    expect(Date.now() - Date.parse(used.lastUsedAt as string)).toBeLessThan(120_000);
  });

  it('is made by a company admin of acme for acme only', async () => {
    const invited = expectOk(
      await as(local.tokens.root).POST('/admin/users', {
        body: { username: 'carla', email: 'carla@acme.example', role: 'company-admin', companies: ['acme'] },
      }),
    );
    const auth = clientFor(local.service).auth;
    const password = invited.temporaryPassword as string;
    const signedIn = await auth.POST('/token', { body: { username: 'carla', password, new_password: 'Acme-clients-2026!' } });
    const carla = as(expectOk(signedIn).access_token);
    const body = { name: 'Globex feed', company: 'globex', role: 'viewer' as const };
    expectError(await carla.POST('/admin/api-clients', { body }), 403);
    expect((await carla.POST('/admin/api-clients', { body: { ...body, name: 'Acme feed', company: 'acme' } })).response.status).toBe(201);
  });

  it('of the viewer role searches but cannot deploy, and no scope widens it', async () => {
    const viewer = await createClient('Reporting', 'viewer');
    const token = await tokenOf(viewer.clientId, viewer.clientSecret);
    expectOk(await searchIn(token, 'acme'));
    expectError(await deploy(token), 403);
    const widened = await tokenOf(viewer.clientId, viewer.clientSecret, 'deployments:write').catch((caught: unknown) => caught);
    expect((widened as oauth.ResponseBodyError).error).toBe('invalid_scope');
  });

  it('keeps its previous secret working until the overlap ends after a rotation, and only the new one after', async () => {
    const rotating = await createClient('Pipeline', 'operator');
    const rotated = expectOk(
      await as(local.tokens.root).POST('/admin/api-clients/{clientId}/secret', {
        params: { path: { clientId: rotating.clientId } },
        body: { previousSecretValidSeconds: 3 },
      }),
    );
    expect(rotated.clientSecret).not.toBe(rotating.clientSecret);
    expect(Date.parse(rotated.previousSecretExpiresAt as string)).toBeGreaterThan(Date.now());
    await tokenOf(rotating.clientId, rotating.clientSecret);
    await tokenOf(rotating.clientId, rotated.clientSecret);
    await eventually(async () => Date.now() > Date.parse(rotated.previousSecretExpiresAt as string), 'the overlap to end', 10_000, 200);
    expect(await refusedWith(rotating.clientId, rotating.clientSecret)).toBe('invalid_client');
    await tokenOf(rotating.clientId, rotated.clientSecret);
  });

  it('once disabled gets invalid_client, and its live token stops working within a minute', async () => {
    const live = await tokenOf(operator.clientId, operator.clientSecret);
    expectOk(await searchIn(live, 'acme'));
    const disabledAt = Date.now();
    const disabled = await as(local.tokens.root).PATCH('/admin/api-clients/{clientId}', {
      params: { path: { clientId: operator.clientId } },
      body: { enabled: false },
    });
    expect(expectOk(disabled).enabled).toBe(false);
    expect(await refusedWith(operator.clientId, operator.clientSecret)).toBe('invalid_client');
    await eventually(async () => (await searchIn(live, 'acme')).response.status === 401, 'the live token to stop', 60_000, 1_000);
    expect(Date.now() - disabledAt).toBeLessThan(60_000);
  }, 90_000);
});
