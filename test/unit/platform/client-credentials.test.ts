/**
 * A client's credentials as the token endpoint reads them (functions/platform/client-credentials.ts): HTTP Basic,
 * form-urlencoded inside the base64, or the form, never both; then the grant (functions/core/devices/tokens.ts)
 * with fakes around one stored device.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { BoundedVerificationGate } from '../../../functions/adapters/verification-gate.js';
import { DEFAULT_CLIENT_FAILURE_POLICY } from '../../../functions/core/access/client-failures.js';
import type { StoredDevice } from '../../../functions/core/devices/model.js';
import { checkClientCredentialsGrant, issueDeviceToken, newDeviceCredential } from '../../../functions/core/devices/tokens.js';
import { OAuthError } from '../../../functions/core/shared/errors.js';
import { clientCredentialsOf } from '../../../functions/platform/client-credentials.js';
import { statusOf } from '../../../functions/platform/problem.js';
import { InMemoryClientFailureStore } from '../../support/client-failures.js';

const T0 = '2026-01-02T03:04:05.000Z';

let secret: string;
let device: StoredDevice;

beforeAll(async () => {
  const issued = await newDeviceCredential('01JCREDENTIAL0000000000000', T0);
  secret = issued.secret;
  device = { id: 'kiosk-1', company: 'acme', serial: 'SN-1', created: T0, updated: T0, connection: { state: 'UNKNOWN' } };
  device.credential = issued.credential;
});

/** The grant's dependencies around the one stored device, with a signer that numbers its tokens. */
function dependencies() {
  let signed = 0;
  return {
    devices: {
      get: async (company: string, deviceId: string) => (company === device.company && deviceId === device.id ? device : undefined),
    },
    signer: { sign: async () => `token-${++signed}` },
    failures: new InMemoryClientFailureStore(),
    gate: new BoundedVerificationGate(),
    policy: DEFAULT_CLIENT_FAILURE_POLICY,
  };
}

/** A token request as the token endpoint receives it: its form members and its `Authorization` header. */
interface TokenEndpointRequest {
  grantType: string;
  clientId?: string;
  clientSecret?: string;
  authorization?: string;
}

/** What the token endpoint does with a request (grantClientCredentials, without the composition root): grant, credentials, token. */
async function grant(request: TokenEndpointRequest, using = dependencies()) {
  checkClientCredentialsGrant(request.grantType);
  const credentials = clientCredentialsOf(request, request.authorization);
  return issueDeviceToken(using, { grantType: request.grantType, ...credentials }, 900);
}

async function refusal(request: TokenEndpointRequest): Promise<OAuthError> {
  const error = await grant(request).catch((caught) => caught);
  expect(error).toBeInstanceOf(OAuthError);
  return error as OAuthError;
}

const basic = (id: string, password: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(password)}`).toString('base64')}`;

describe('client authentication at the token endpoint', () => {
  it('reads the form when there is no Basic credential, and HTTP Basic, form-urlencoded inside the base64, when there is', () => {
    expect(clientCredentialsOf({ clientId: 'acme~kiosk-1', clientSecret: 's' }, undefined)).toEqual({
      clientId: 'acme~kiosk-1',
      clientSecret: 's',
      method: 'client_secret_post',
    });
    expect(clientCredentialsOf({}, basic('acme~kiosk 1', 'a+b:c'))).toEqual({
      clientId: 'acme~kiosk 1',
      clientSecret: 'a+b:c',
      method: 'client_secret_basic',
    });
    // A bearer token is no client authentication: the form is read.
    expect(clientCredentialsOf({ clientId: 'acme~kiosk-1' }, 'Bearer abc').method).toBe('client_secret_post');
  });

  it('accepts HTTP Basic client authentication, form-urlencoded inside the base64', async () => {
    const using = dependencies();
    const request = { grantType: 'client_credentials', authorization: basic('acme~kiosk-1', secret) };
    await expect(grant(request, using)).resolves.toEqual({ accessToken: 'token-1', expiresInSeconds: 900 });
    // The same client named in the form as well is fine; another one is not.
    await expect(grant({ ...request, clientId: 'acme~kiosk-1' }, using)).resolves.toBeDefined();
    expect((await refusal({ ...request, clientId: 'acme~kiosk-2' })).code).toBe('invalid_request');
  });

  it('refuses another grant (400 unsupported_grant_type) before reading the credentials, two authentication methods or a malformed Basic credential (400 invalid_request)', async () => {
    const unsupported = await refusal({ grantType: 'password', clientSecret: secret, authorization: basic('acme~kiosk-1', secret) });
    expect([unsupported.code, statusOf(unsupported)]).toEqual(['unsupported_grant_type', 400]);
    const both = await refusal({ grantType: 'client_credentials', clientSecret: secret, authorization: basic('acme~kiosk-1', secret) });
    expect([both.code, statusOf(both)]).toEqual(['invalid_request', 400]);
    const noColon = await refusal({
      grantType: 'client_credentials',
      authorization: `Basic ${Buffer.from('acme~kiosk-1').toString('base64')}`,
    });
    expect(noColon.code).toBe('invalid_request');
    const badEscape = await refusal({
      grantType: 'client_credentials',
      authorization: `Basic ${Buffer.from('acme%~kiosk-1:x').toString('base64')}`,
    });
    expect(badEscape.code).toBe('invalid_request');
  });
});
