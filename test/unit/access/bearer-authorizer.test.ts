/**
 * The AWS bearer authorizer (functions/handlers/bearer-authorizer.ts) with its real composition: the pool's key set
 * served over HTTP on 127.0.0.1 (what Cognito's JWKS URL answers) and the device issuer's public key read from KMS
 * (GetPublicKey of a stand-in: the KMS SDK is the Lambda runtime's, not a dependency here). Tokens are signed here with each issuer's private key; the context
 * the authorizer answers is then handed to a real route handler as API Gateway would (`requestContext.authorizer.lambda`).
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGatewayProxyEventV2, APIGatewayRequestAuthorizerEventV2, Context } from 'aws-lambda';
import { exportJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ENV } from '../../../functions/contract/environment.js';

const POOL_ISSUER = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_TestPool1';
const APP_CLIENT_ID = '4example0appclient0id00000';
const KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const DEVICE_ISSUER = 'https://auth.example.test/device';
const BASE_URL = 'https://api.example.test/';
const CLIENT_ID = 'api_01JEXAMPLE0000000000000000';

const context = {
  getRemainingTimeInMillis: () => 10_000,
  awsRequestId: 'request-1',
  functionName: 'BearerAuthorizer',
} as unknown as Context;
const pool = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const device = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const stranger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
/** The stand-in for KMS: GetPublicKey answers the device key's SPKI DER, or throws `failure` while it is set. */
const kms = {
  failure: undefined as Error | undefined,
  calls: 0,
  async getPublicKey() {
    kms.calls += 1;
    if (kms.failure !== undefined) throw kms.failure;
    return { KeySpec: 'ECC_NIST_P256', PublicKey: new Uint8Array(device.publicKey.export({ format: 'der', type: 'spki' })) };
  },
};
vi.mock('../../../functions/adapters/aws/kms-device-token-signer.js', async (original) => ({
  ...(await original<object>()),
  runtimeKmsClient: async () => kms,
}));
let server: Server;
let handler: typeof import('../../../functions/handlers/bearer-authorizer.js').handler;
/** What the pool's key set answers (a Cognito outage: 500). */
let jwksStatus = 200;

/** A compact ES256 JWT of `claims`, valid `seconds` from now (negative: expired). */
async function sign(key: KeyObject, kid: string, claims: Record<string, unknown>, seconds = 600): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'ES256', kid })
    .setIssuedAt(now)
    .setExpirationTime(now + seconds)
    .sign(key);
}

/** A user's Cognito access token: `client_id` the app client, no `aud`. */
const userToken = (claims: Record<string, unknown> = {}, seconds?: number) =>
  sign(
    pool.privateKey,
    'pool-key',
    {
      iss: POOL_ISSUER,
      sub: '0d9e1f2a-user',
      username: 'alice',
      client_id: APP_CLIENT_ID,
      token_use: 'access',
      scope: 'search:read deployments:write',
      companies: ['acme'],
      ...claims,
    },
    seconds,
  );

/** An API client's token of the device issuer (`aud` {base_url}). */
const clientToken = (key: KeyObject = device.privateKey, claims: Record<string, unknown> = {}) =>
  // The KMS key id is the `kid` of the device issuer's tokens and key set (keyIdOf).
  sign(key, '1234abcd-12ab-34cd-56ef-1234567890ab', {
    iss: DEVICE_ISSUER,
    aud: BASE_URL,
    sub: CLIENT_ID,
    client_id: CLIENT_ID,
    username: `client:${CLIENT_ID}`,
    scope: 'search:read',
    companies: ['acme'],
    ...claims,
  });

function authorizerEvent(authorization: string | undefined): APIGatewayRequestAuthorizerEventV2 {
  return {
    version: '2.0',
    type: 'REQUEST',
    routeArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/$default/POST/companies/acme/whoami',
    identitySource: authorization === undefined ? [] : [authorization],
    routeKey: 'POST /companies/{companyId}/whoami',
    rawPath: '/companies/acme/whoami',
    rawQueryString: '',
    headers: authorization === undefined ? {} : { authorization },
    requestContext: {} as APIGatewayRequestAuthorizerEventV2['requestContext'],
  } as APIGatewayRequestAuthorizerEventV2;
}

/** Invokes the authorizer; `'Unauthorized'` when it refused the token (API Gateway's 401). */
async function authorize(authorization: string | undefined): Promise<Record<string, string> | 'Unauthorized'> {
  try {
    const result = await handler(authorizerEvent(authorization), context);
    expect(result.isAuthorized).toBe(true);
    return result.context as Record<string, string>;
  } catch (error) {
    if (error instanceof Error && error.message === 'Unauthorized') return 'Unauthorized';
    throw error;
  }
}

/** The whoami fixture route invoked as API Gateway does after the bearer authorizer answered `claims`. */
async function callRoute(claims: Record<string, string>): Promise<{ statusCode: number; body: Record<string, unknown> }> {
  const { handler: route } = await import('../local/fixtures/whoami-handler.js');
  const event = {
    version: '2.0',
    routeKey: 'POST /companies/{companyId}/whoami',
    rawPath: '/companies/acme/whoami',
    rawQueryString: '',
    headers: {},
    pathParameters: { companyId: 'acme' },
    isBase64Encoded: false,
    requestContext: {
      http: { method: 'POST', path: '/companies/acme/whoami', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
      requestId: 'request-2',
      routeKey: 'POST /companies/{companyId}/whoami',
      authorizer: { lambda: claims },
    },
  } as unknown as APIGatewayProxyEventV2;
  const response = (await route(event, context)) as { statusCode: number; body: string };
  return { statusCode: response.statusCode, body: JSON.parse(response.body) as Record<string, unknown> };
}

beforeAll(async () => {
  const jwks = { keys: [{ ...(await exportJWK(pool.publicKey)), kid: 'pool-key', alg: 'ES256', use: 'sig' }] };
  server = createServer((_request, response) => {
    response.writeHead(jwksStatus, { 'content-type': 'application/json' }).end(jwksStatus === 200 ? JSON.stringify(jwks) : '{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(process.env, {
    [ENV.jwtIssuer]: POOL_ISSUER,
    [ENV.jwtAudience]: APP_CLIENT_ID,
    [ENV.jwksUrl]: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    [ENV.deviceTokenKeyArn]: KEY_ARN,
    [ENV.deviceTokenIssuer]: DEVICE_ISSUER,
    [ENV.deviceTokenAudience]: BASE_URL,
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  });
  ({ handler } = await import('../../../functions/handlers/bearer-authorizer.js'));
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  kms.failure = undefined;
});

describe('the bearer authorizer of the user routes on AWS', () => {
  it("accepts a user's Cognito access token and an API client's token of the device issuer, handing over their claims", async () => {
    const user = await authorize(`Bearer ${await userToken()}`);
    expect(user).toMatchObject({ iss: POOL_ISSUER, sub: '0d9e1f2a-user', username: 'alice', companies: '[acme]' });
    const client = await authorize(`Bearer ${await clientToken()}`);
    expect(client).toMatchObject({ iss: DEVICE_ISSUER, sub: CLIENT_ID, client_id: CLIENT_ID, scope: 'search:read' });
  });

  it('refuses with Unauthorized (401) an untrusted issuer, a wrong key, another audience, an expired token, a missing or malformed header', async () => {
    expect(await authorize(undefined)).toBe('Unauthorized');
    expect(await authorize('Basic YWxpY2U6c2VjcmV0')).toBe('Unauthorized');
    expect(await authorize(`Bearer ${await clientToken(device.privateKey, { iss: 'https://evil.example.test' })}`)).toBe('Unauthorized');
    // The device issuer's name, another key: the signature fails against the key KMS holds.
    expect(await authorize(`Bearer ${await clientToken(stranger.privateKey)}`)).toBe('Unauthorized');
    expect(await authorize(`Bearer ${await clientToken(device.privateKey, { aud: 'https://other.example.test/' })}`)).toBe('Unauthorized');
    // A pool token of another app client (no `aud`, another `client_id`).
    expect(await authorize(`Bearer ${await userToken({ client_id: 'another-app-client' })}`)).toBe('Unauthorized');
    expect(await authorize(`Bearer ${await userToken({}, -60)}`)).toBe('Unauthorized');
    // The pool's ID token names the app client as `aud`: only access tokens act on the API.
    expect(await authorize(`Bearer ${await userToken({ token_use: 'id', aud: APP_CLIENT_ID })}`)).toBe('Unauthorized');
  });

  it('fails (API Gateway answers 500, nothing cached) while KMS cannot give the public key, and recovers on the next token', async () => {
    // A fresh module graph: the key read by the earlier tests is kept for the life of the process.
    vi.resetModules();
    const fresh = (await import('../../../functions/handlers/bearer-authorizer.js')).handler;
    kms.failure = Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
    const failing = fresh(authorizerEvent(`Bearer ${await clientToken()}`), context);
    await expect(failing).rejects.toThrow(/KMS|retry/i);
    kms.failure = undefined;
    const before = kms.calls;
    await expect(fresh(authorizerEvent(`Bearer ${await clientToken()}`), context)).resolves.toMatchObject({ isAuthorized: true });
    expect(kms.calls).toBe(before + 1);
  });

  it("fails, rather than refusing the token, while the pool's key set answers 500", async () => {
    vi.resetModules();
    const fresh = (await import('../../../functions/handlers/bearer-authorizer.js')).handler;
    jwksStatus = 500;
    try {
      const failing = fresh(authorizerEvent(`Bearer ${await userToken()}`), context);
      await expect(failing).rejects.toThrow(/issuer cannot be reached/);
    } finally {
      jwksStatus = 200;
    }
  });

  it("hands a route's function what it needs: the caller, its scopes; an expired token whose answer API Gateway cached is refused there", async () => {
    const claims = (await authorize(`Bearer ${await userToken()}`)) as Record<string, string>;
    const served = await callRoute(claims);
    expect(served).toEqual({
      statusCode: 200,
      body: { subject: '0d9e1f2a-user', companies: ['acme'], scopes: ['deployments:write', 'search:read'] },
    });
    // The same answer, replayed after the token's expiry (API Gateway keeps it up to 300 s).
    const expired = await callRoute({ ...claims, exp: String(Math.floor(Date.now() / 1000) - 1) });
    expect(expired.statusCode).toBe(401);
    expect(expired.body.detail).toMatch(/expired/);
    // A token without the route's scope passes the authorizer and is refused by the function (403 problem+json).
    const narrow = (await authorize(`Bearer ${await userToken({ scope: 'devices:read' })}`)) as Record<string, string>;
    const refused = await callRoute(narrow);
    expect(refused.statusCode).toBe(403);
    expect(String(refused.body.detail)).toContain('search:read');
    // A context without `exp` is no bearer authorizer's: refused.
    const { exp: _exp, ...noExpiry } = claims;
    expect((await callRoute(noExpiry)).statusCode).toBe(401);
  });
});
