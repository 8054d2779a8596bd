/**
 * Bearer token verification (functions/platform/auth.ts) against a real JWKS served on 127.0.0.1: the cache of
 * verified tokens answers repeats but never accepts a token past its `exp` nor a tampered copy of a cached token; the
 * authorizer context it builds has API Gateway's claim format. And the caller as handlers read it from that context
 * (principalFromJwt), whichever form the `companies` claim arrives in.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UnauthorizedError } from '../../../functions/core/shared/errors.js';
import { flattenClaims, principalFromJwt, verifyBearerToken } from '../../../functions/platform/auth.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'device-scenario-service';
let server: Server;
let sign: (claims: Record<string, unknown>, expiresAt: number) => Promise<string>;

beforeAll(async () => {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  process.env.JWT_ISSUER = ISSUER;
  process.env.JWT_AUDIENCE = AUDIENCE;
  process.env.JWKS_URL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`;
  sign = (claims, expiresAt) =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('olivia')
      .setIssuedAt()
      .setExpirationTime(expiresAt)
      .sign(privateKey);
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
});

const inOneHour = () => Math.floor(Date.now() / 1000) + 3_600;

describe('verifyBearerToken', () => {
  it('returns the caller from the token, and the same caller for a repeat of that token', async () => {
    const token = await sign({ companies: ['acme', 'globex'], scope: 'search:read deployments:read' }, inOneHour());
    const first = await verifyBearerToken(`Bearer ${token}`);
    expect(first.principal).toEqual({
      subject: 'olivia',
      username: 'olivia',
      companies: ['acme', 'globex'],
      scopes: new Set(['search:read', 'deployments:read']),
    });
    expect(await verifyBearerToken(`Bearer ${token}`)).toBe(first);
    expect(Object.isFrozen(first.principal.companies)).toBe(true);
  });

  it("gives the authorizer context API Gateway's JWT authorizer gives: every claim a string, arrays bracketed, the scopes split", async () => {
    const expiresAt = inOneHour();
    const token = await sign({ companies: ['acme', 'globex'], scope: 'search:read deployments:read' }, expiresAt);
    const { jwt, principal } = await verifyBearerToken(`Bearer ${token}`);
    expect(jwt.scopes).toEqual(['search:read', 'deployments:read']);
    expect(jwt.claims).toEqual({
      sub: 'olivia',
      iss: ISSUER,
      aud: AUDIENCE,
      companies: '[acme globex]',
      scope: 'search:read deployments:read',
      iat: expect.stringMatching(/^\d+$/),
      exp: String(expiresAt),
    });
    // The handler reads the same caller back from that context.
    expect(principalFromJwt(jwt)).toEqual(principal);
  });

  it('refuses a token verified before once its exp has passed', async () => {
    const expiresAt = Math.floor(Date.now() / 1000) + 2;
    const token = await sign({ companies: ['acme'], scope: 'search:read' }, expiresAt);
    expect((await verifyBearerToken(`Bearer ${token}`)).principal.companies).toEqual(['acme']);
    // The clock (the cache's and the JWT library's) moves past exp; timers stay real for the JWKS server.
    vi.useFakeTimers({ toFake: ['Date'], now: expiresAt * 1000 + 50 });
    try {
      await expect(verifyBearerToken(`Bearer ${token}`)).rejects.toThrow(/expired/);
    } finally {
      vi.useRealTimers();
    }
  });

  it('refuses a tampered copy of a cached token (payload or signature changed)', async () => {
    const token = await sign({ companies: ['acme'], scope: 'search:read' }, inOneHour());
    await verifyBearerToken(`Bearer ${token}`);
    const [header, payload, signature] = token.split('.') as [string, string, string];
    const widened = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), companies: ['acme', 'globex'] }),
    ).toString('base64url');
    await expect(verifyBearerToken(`Bearer ${header}.${widened}.${signature}`)).rejects.toBeInstanceOf(UnauthorizedError);
    const flipped = `${signature.slice(0, -2)}${signature.endsWith('AA') ? 'BB' : 'AA'}`;
    await expect(verifyBearerToken(`Bearer ${header}.${payload}.${flipped}`)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});

describe('flattenClaims', () => {
  it('renders claims as API Gateway does: strings kept, numbers and booleans as text, arrays as "[a b]", objects as JSON, nulls left out', () => {
    expect(
      flattenClaims({
        sub: 'alice',
        exp: 1767225600,
        flag: true,
        companies: ['acme'],
        none: [],
        address: { city: 'Lyon' },
        gone: null,
      } as never),
    ).toEqual({
      sub: 'alice',
      exp: '1767225600',
      flag: 'true',
      companies: '[acme]',
      none: '[]',
      address: '{"city":"Lyon"}',
    });
  });
});

describe('principalFromJwt', () => {
  const claims = { sub: 'olivia', scope: 'search:read deployments:read' };

  it.each([
    ['a real array (local tools, type definitions)', ['acme', 'globex']],
    ["API Gateway's flattened array", '[acme globex]'],
    ['the flattened array with commas', '[acme, globex]'],
    ['a JSON array in a string', '["acme","globex"]'],
    ['a space-separated string', 'acme globex'],
  ])('reads companies given as %s', (_form, companies) => {
    expect(principalFromJwt({ claims: { ...claims, companies }, scopes: null }).companies).toEqual(['acme', 'globex']);
  });

  it('reads one company and no company', () => {
    expect(principalFromJwt({ claims: { ...claims, companies: '[acme]' }, scopes: null }).companies).toEqual(['acme']);
    expect(principalFromJwt({ claims: { ...claims, companies: '[]' }, scopes: null }).companies).toEqual([]);
  });

  it('takes the scopes from jwt.scopes and from the scope claim', () => {
    expect(principalFromJwt({ claims: { sub: 'olivia', companies: '[acme]' }, scopes: ['search:read'] }).scopes).toEqual(
      new Set(['search:read']),
    );
    expect(principalFromJwt({ claims: { ...claims, companies: '[acme]' }, scopes: null }).scopes).toEqual(
      new Set(['search:read', 'deployments:read']),
    );
  });

  it("names the caller by the token's username claim (Cognito's sub is a UUID), else by sub", () => {
    const cognito = { sub: '5f3c-uuid', username: 'alice', companies: '[acme]' };
    expect(principalFromJwt({ claims: cognito, scopes: null })).toMatchObject({ subject: '5f3c-uuid', username: 'alice' });
    expect(principalFromJwt({ claims: { ...claims, companies: '[acme]' }, scopes: null }).username).toBe('olivia');
  });

  it('refuses with 401 a context without sub or without a companies claim', () => {
    expect(() => principalFromJwt({ claims: { companies: '[acme]' }, scopes: null })).toThrow(UnauthorizedError);
    expect(() => principalFromJwt({ claims: { sub: 'olivia' }, scopes: null })).toThrow(/companies/);
    expect(() => principalFromJwt({ claims: { sub: 'olivia', companies: 42 }, scopes: null })).toThrow(/companies/);
  });
});
