import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalIdentityProvider, USERS_FILE } from '../../../functions/adapters/embedded/local-identity-provider.js';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { authToken } from '../../../functions/contract/routes/service.js';
import { DEFAULT_CLIENT_FAILURE_POLICY } from '../../../functions/core/access/client-failures.js';
import type { StoredDevice } from '../../../functions/core/devices/model.js';
import type { DeviceTokenClaims, DeviceTokenSigner } from '../../../functions/core/devices/ports.js';
import { type ClientCredentialsRequest, issueDeviceToken, newDeviceCredential } from '../../../functions/core/devices/tokens.js';
import { OAuthError } from '../../../functions/core/shared/errors.js';
import { DEVICE_SCOPE } from '../../../functions/core/shared/principal.js';
import { jwtAuthorizerContext, principalFromJwt } from '../../../functions/platform/auth.js';
import { clientCredentialsOf } from '../../../functions/platform/client-credentials.js';
import { routeInput } from '../../../functions/platform/http.js';
import { oauthErrorResponse, statusOf } from '../../../functions/platform/problem.js';
import { InMemoryClientFailureStore } from '../../support/client-failures.js';

const T0 = '2026-01-02T03:04:05.000Z';
const CREDENTIAL_ID = '01JCREDENTIAL0000000000000';

class FakeSigner implements DeviceTokenSigner {
  readonly calls: { claims: DeviceTokenClaims; lifetimeSeconds: number }[] = [];
  async sign(claims: DeviceTokenClaims, lifetimeSeconds: number): Promise<string> {
    this.calls.push({ claims, lifetimeSeconds });
    return `token-${this.calls.length}`;
  }
}

let secret: string;
let device: StoredDevice;

beforeAll(async () => {
  const issued = await newDeviceCredential(CREDENTIAL_ID, T0);
  secret = issued.secret;
  device = {
    id: 'kiosk-1',
    company: 'acme',
    serial: 'SN-1',
    created: T0,
    updated: T0,
    connection: { state: 'UNKNOWN' },
    credential: issued.credential,
  };
});

/** Fakes around one stored device (`null`: none). */
function world(stored: StoredDevice | null = device) {
  const signer = new FakeSigner();
  const reads: string[] = [];
  const devices = {
    get: async (companyId: string, deviceId: string) => {
      reads.push(`${companyId}#${deviceId}`);
      return stored !== null && companyId === stored.company && deviceId === stored.id ? stored : undefined;
    },
  };
  const dependencies = {
    devices,
    signer,
    failures: new InMemoryClientFailureStore(),
    gate: new BoundedVerificationGate(),
    policy: DEFAULT_CLIENT_FAILURE_POLICY,
  };
  return { signer, reads, dependencies };
}

const basic = (id: string, password: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(password)}`).toString('base64')}`;

async function refusal(request: ClientCredentialsRequest, stored: StoredDevice | null = device): Promise<OAuthError> {
  const error = await issueDeviceToken(world(stored).dependencies, request, 900).catch((caught) => caught);
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

describe('issueDeviceToken', () => {
  it('signs a device token for the right client id and secret in the form', async () => {
    const w = world();
    const token = await issueDeviceToken(
      w.dependencies,
      { grantType: 'client_credentials', clientId: 'acme~kiosk-1', clientSecret: secret },
      600,
    );
    expect(token).toEqual({ accessToken: 'token-1', expiresInSeconds: 600 });
    expect(w.signer.calls).toEqual([
      {
        claims: { sub: 'kiosk-1', companies: ['acme'], scope: DEVICE_SCOPE, client_id: 'acme~kiosk-1', cred: CREDENTIAL_ID },
        lifetimeSeconds: 600,
      },
    ]);
    expect(w.reads).toEqual(['acme#kiosk-1']);
  });

  it('refuses a wrong secret, an unknown or malformed client, and a device deleted, being deleted or without credentials alike', async () => {
    const good = { grantType: 'client_credentials', clientId: 'acme~kiosk-1', clientSecret: secret };
    const refusals = [
      await refusal({ ...good, clientSecret: `${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}` }),
      await refusal({ ...good, clientSecret: undefined }),
      await refusal({ ...good, clientId: 'acme~kiosk-2' }),
      await refusal({ ...good, clientId: 'globex~kiosk-1' }),
      await refusal({ ...good, clientId: 'kiosk-1' }),
      await refusal({ ...good, clientId: undefined }),
      await refusal(good, null),
      await refusal(good, { ...device, deleting: true }),
      await refusal(good, { ...device, credential: undefined }),
    ];
    for (const error of refusals) {
      expect(error.code).toBe('invalid_client');
      expect(statusOf(error)).toBe(401);
      expect(error.message).toBe(refusals[0]?.message);
      expect(error.viaBasic).toBe(false);
    }
    const viaBasic = await refusal({ grantType: 'client_credentials', ...clientCredentialsOf({}, basic('acme~kiosk-1', 'wrong')) });
    expect([viaBasic.code, viaBasic.viaBasic]).toEqual(['invalid_client', true]);
  });

  it('refuses another grant (400 unsupported_grant_type)', async () => {
    const unsupported = await refusal({ grantType: 'password', clientId: 'acme~kiosk-1', clientSecret: secret });
    expect([unsupported.code, statusOf(unsupported)]).toEqual(['unsupported_grant_type', 400]);
  });
});

describe('the token route body', () => {
  const event = (contentType: string, body: string, headers: Record<string, string> = {}) =>
    ({ rawQueryString: '', headers: { 'content-type': contentType, ...headers }, body }) as unknown as APIGatewayProxyEventV2;

  it('takes the JSON username/password form and the client credentials form', () => {
    expect(routeInput(authToken, event('application/json', '{"username":"alice","password":"pw"}')).body).toEqual({
      username: 'alice',
      password: 'pw',
    });
    expect(
      routeInput(
        authToken,
        event('application/x-www-form-urlencoded', 'grant_type=client_credentials&client_id=acme%7Ekiosk-1&client_secret=a%2Bb'),
      ).body,
    ).toEqual({ grant_type: 'client_credentials', client_id: 'acme~kiosk-1', client_secret: 'a+b' });
  });

  it('refuses a form without grant_type or with a repeated member as an OAuth invalid_request', () => {
    for (const body of ['client_id=acme~kiosk-1', 'grant_type=client_credentials&client_id=a~b&client_id=a~c']) {
      let thrown: unknown;
      try {
        routeInput(authToken, event('application/x-www-form-urlencoded; charset=utf-8', body));
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(OAuthError);
      expect((thrown as OAuthError).code).toBe('invalid_request');
    }
  });

  it('answers an over-long client_id or client_secret the same by form and by HTTP Basic: 401 invalid_client', async () => {
    /** What the token endpoint answers a form (and Authorization header): its route input, then the grant. */
    const answer = async (form: string, authorization?: string) => {
      try {
        const { body } = routeInput(
          authToken,
          event('application/x-www-form-urlencoded', form, authorization === undefined ? {} : { authorization }),
        );
        if ('username' in body || 'refresh_token' in body) throw new Error('not a client credentials form');
        const credentials = clientCredentialsOf({ clientId: body.client_id, clientSecret: body.client_secret }, authorization);
        await issueDeviceToken(world().dependencies, { grantType: body.grant_type, ...credentials }, 900);
        return { status: 200 };
      } catch (error) {
        const response = oauthErrorResponse(error as OAuthError);
        return { status: response.statusCode, error: JSON.parse(response.body as string).error };
      }
    };
    const longId = `acme~${'k'.repeat(300)}`;
    const longSecret = 's'.repeat(300);
    for (const [id, password] of [
      [longId, secret],
      ['acme~kiosk-1', longSecret],
    ] as const) {
      const byForm = await answer(`grant_type=client_credentials&client_id=${encodeURIComponent(id)}&client_secret=${password}`);
      const byBasic = await answer('grant_type=client_credentials', basic(id, password));
      expect(byForm).toEqual({ status: 401, error: 'invalid_client' });
      expect(byBasic).toEqual(byForm);
    }
  });

  it('answers OAuth errors as RFC 6749 §5.2 JSON, with a Basic challenge only on a 401 of a Basic client', () => {
    const response = oauthErrorResponse(new OAuthError('invalid_client', 'no', true));
    expect(response.statusCode).toBe(401);
    expect(response.headers).toMatchObject({ 'content-type': 'application/json', 'WWW-Authenticate': 'Basic realm="device"' });
    expect(JSON.parse(response.body as string)).toEqual({ error: 'invalid_client', error_description: 'no' });
    expect(oauthErrorResponse(new OAuthError('invalid_client', 'no')).headers).not.toHaveProperty('WWW-Authenticate');
    expect(oauthErrorResponse(new OAuthError('unsupported_grant_type', 'no')).statusCode).toBe(400);
  });
});

describe('LocalIdentityProvider as the device token signer', () => {
  let directory: string;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'dss-signer-'));
    await writeFile(join(directory, USERS_FILE), '[]');
  });
  afterAll(() => rm(directory, { recursive: true, force: true }));

  it('signs a token its JWKS verifies, read back as a device principal', async () => {
    const provider = await LocalIdentityProvider.fromDirectory(directory, { issuer: 'https://issuer.test', audience: 'dss' });
    const token = await provider.sign(
      { sub: 'kiosk-1', companies: ['acme'], scope: DEVICE_SCOPE, client_id: 'acme~kiosk-1', cred: CREDENTIAL_ID },
      900,
    );
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(provider.jwks()), {
      issuer: 'https://issuer.test',
      audience: 'dss',
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect((payload.exp as number) - (payload.iat as number)).toBe(900);
    expect(payload.nbf).toBe(payload.iat);
    expect(typeof payload.jti).toBe('string');
    expect(principalFromJwt(jwtAuthorizerContext(payload)).device).toEqual({
      company: 'acme',
      deviceId: 'kiosk-1',
      credentialId: CREDENTIAL_ID,
    });
  });
});
