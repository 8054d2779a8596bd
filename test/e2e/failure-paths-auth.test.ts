/**
 * End-to-end failure paths of authentication (401) and authorization (403) over real HTTP against one local service
 * (`bin/local.ts`): missing, malformed, forged, expired or foreign tokens; valid tokens without the company or the scope.
 *
 * Requests the typed client can express go through it (clientFor); the others are hand-built with `call` on purpose:
 * missing, forged or foreign-scheme tokens, bodies that are not JSON or not of the documented shape, parameters the
 * document does not have or values of the wrong type, routes sent to the wrong address or with the wrong method.
 * Every error must be an RFC 9457 problem (docs/contract.md, "Errors").
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { base64url, deploymentHelpers, entry, expectProblem, expectViolation, type Problem, validArchive } from './failure-paths.js';
import { answerOf, call, clientFor, type JsonResult, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob', 'olivia'] });

const { as, postDeployments, listDeployments, listDeviceDeployments, deviceDeployments } = deploymentHelpers(() => local.service);

const AUDIENCE = 'device-scenario-service';
const FULL_SCOPE = 'scenarios:read scenarios:write deployments:read deployments:write search:read devices:write';
type SigningKey = Awaited<ReturnType<typeof importJWK>>;

function expectUnauthorized(result: JsonResult, detail?: RegExp): Problem {
  const problem = expectProblem(result, 401, detail);
  expect(result.headers.get('www-authenticate') ?? '').toMatch(/^Bearer\b/);
  return problem;
}

/** Claims of a well-formed alice token (iss/aud are set by the signer helpers). */
function aliceClaims(): Record<string, unknown> {
  return { companies: ['acme'], scope: FULL_SCOPE };
}

async function realSigningKey(): Promise<{ key: SigningKey; kid: string; publicJwk: JWK }> {
  const jwk = JSON.parse(await readFile(join(local.service.dataDirectory, 'auth', 'signing-key.json'), 'utf8')) as JWK;
  expect(jwk.kid, 'the local signing key has a kid').toEqual(expect.any(String));
  const { d: _private, ...publicJwk } = jwk;
  return { key: await importJWK(jwk, 'ES256'), kid: jwk.kid as string, publicJwk };
}

interface TokenOptions {
  issuer?: string;
  audience?: string;
  /** Seconds since epoch. */
  exp?: number;
  iat?: number;
  kid?: string;
}

async function signEs256(key: Parameters<SignJWT['sign']>[0], options: TokenOptions = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT(aliceClaims())
    .setProtectedHeader({ alg: 'ES256', typ: 'JWT', ...(options.kid === undefined ? {} : { kid: options.kid }) })
    .setSubject('alice')
    .setIssuer(options.issuer ?? local.service.auth)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(options.iat ?? now)
    .setExpirationTime(options.exp ?? now + 600)
    .sign(key);
}

/** A search request (needs only `search:read`): the probe for authentication outcomes. */
function searchWith(headers: Record<string, string>): Promise<JsonResult> {
  return call(`${local.service.api}/resources/search?pageSize=1`, { headers });
}

// ---------------------------------------------------------------------------------------------------------------
// Authentication (401)
// ---------------------------------------------------------------------------------------------------------------

describe('401: missing, malformed or untrusted bearer tokens', () => {
  it('accepts a token the test signs itself with the real local key (control for the forgeries below)', async () => {
    const { key, kid } = await realSigningKey();
    const result = await searchWith({ authorization: `Bearer ${await signEs256(key, { kid })}` });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
  });

  it('refuses a request without an Authorization header on every address', async () => {
    const probes = [
      call(`${local.service.api}/resources/search`),
      call(`${local.service.api}/resources/search/filters`),
      call(`${local.service.api}/companies/acme/resources/DEVICE/deployments`),
      call(`${local.service.api}/companies/acme/resources/deployments`, {
        json: { requests: [entry('acme-kiosk-0001', 'acme-welcome', '1.0.0')] },
      }),
      call(`${local.service.api}/companies/acme/resources/scenarios/skeleton.zip`),
      call(`${local.service.upload}/companies/acme/resources/scenarios`, {
        method: 'POST',
        body: new Uint8Array([1, 2, 3]),
        headers: { 'content-type': 'application/zip' },
      }),
    ];
    for (const result of await Promise.all(probes)) expectUnauthorized(result, /Authorization: Bearer/);
    // Nothing was deployed by the unauthenticated POST.
    expect(await deviceDeployments(local.tokens.alice, 'acme', 'acme-kiosk-0001')).toEqual([]);
  });

  it('refuses "Bearer garbage" (not a JWT)', async () => {
    const result = await searchWith({ authorization: 'Bearer garbage' });
    expectUnauthorized(result, /Bearer <JWT>/);
    expect(result.headers.get('www-authenticate')).toMatch(/error="invalid_request"/);
  });

  it('refuses a non-Bearer scheme', async () => {
    expectUnauthorized(await searchWith({ authorization: `Basic ${Buffer.from('alice:alice-demo-password').toString('base64')}` }));
  });

  it('refuses an ES256 token signed by another key (unknown kid, and the real kid)', async () => {
    const { kid } = await realSigningKey();
    const { privateKey } = await generateKeyPair('ES256');
    for (const token of [
      await signEs256(privateKey, { kid: 'attacker-key' }),
      await signEs256(privateKey, { kid }),
      await signEs256(privateKey),
    ]) {
      const result = await searchWith({ authorization: `Bearer ${token}` });
      expectUnauthorized(result, /not valid/);
      expect(result.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
    }
  });

  it('refuses an alg: none token', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { kid } = await realSigningKey();
    for (const header of [{ alg: 'none', typ: 'JWT' }, { alg: 'none', typ: 'JWT', kid }, { alg: 'NONE' }]) {
      const token = `${base64url(header)}.${base64url({ ...aliceClaims(), sub: 'alice', iss: local.service.auth, aud: AUDIENCE, iat: now, exp: now + 600 })}.`;
      expectUnauthorized(await searchWith({ authorization: `Bearer ${token}` }), /not valid/);
    }
  });

  it('refuses HS256 tokens, including one keyed with the published public key (algorithm confusion)', async () => {
    const { kid, publicJwk } = await realSigningKey();
    const jwks = expectOk(await clientFor(local.service).auth.GET('/.well-known/jwks.json'));
    expect(jwks.keys.map((key) => key.kid)).toContain(kid);
    expect(
      jwks.keys.every((key) => key.d === undefined),
      'the JWKS must not publish the private part',
    ).toBe(true);
    const secrets = [
      new TextEncoder().encode('a-shared-secret-of-at-least-32-bytes!!'),
      new TextEncoder().encode(JSON.stringify(publicJwk)),
    ];
    for (const secret of secrets) {
      const token = await new SignJWT(aliceClaims())
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid })
        .setSubject('alice')
        .setIssuer(local.service.auth)
        .setAudience(AUDIENCE)
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(secret);
      expectUnauthorized(await searchWith({ authorization: `Bearer ${token}` }), /not valid/);
    }
  });

  it('refuses an expired token signed with the real local key', async () => {
    const { key, kid } = await realSigningKey();
    const now = Math.floor(Date.now() / 1000);
    const result = await searchWith({ authorization: `Bearer ${await signEs256(key, { kid, iat: now - 7_200, exp: now - 3_600 })}` });
    expectUnauthorized(result, /expired/);
    expect(result.headers.get('www-authenticate')).toMatch(/error="invalid_token"/);
  });

  it('refuses a real-key token with the wrong audience or the wrong issuer', async () => {
    const { key, kid } = await realSigningKey();
    expectUnauthorized(await searchWith({ authorization: `Bearer ${await signEs256(key, { kid, audience: 'another-service' })}` }), /aud/);
    expectUnauthorized(
      await searchWith({ authorization: `Bearer ${await signEs256(key, { kid, issuer: 'https://evil.example' })}` }),
      /iss/,
    );
  });

  it('refuses real-key tokens that are not yet valid (nbf), lack the companies claim or lack sub', async () => {
    const { key, kid } = await realSigningKey();
    const now = Math.floor(Date.now() / 1000);
    const base = () =>
      new SignJWT(aliceClaims())
        .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid })
        .setIssuer(local.service.auth)
        .setAudience(AUDIENCE)
        .setIssuedAt(now)
        .setExpirationTime(now + 600);
    const notYet = await base()
      .setSubject('alice')
      .setNotBefore(now + 3_600)
      .sign(key);
    expectUnauthorized(await searchWith({ authorization: `Bearer ${notYet}` }), /nbf/);
    const noSubject = await base().sign(key);
    expectUnauthorized(await searchWith({ authorization: `Bearer ${noSubject}` }), /sub/);
    const noCompanies = await new SignJWT({ scope: FULL_SCOPE })
      .setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid })
      .setSubject('alice')
      .setIssuer(local.service.auth)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(key);
    expectUnauthorized(await searchWith({ authorization: `Bearer ${noCompanies}` }), /companies/);
  });

  it('POST /token: wrong password → 401 problem; malformed body → 400 problem', async () => {
    const userToken = async (username: string, password: string) =>
      answerOf(await clientFor(local.service).auth.POST('/token', { body: { username, password } }));
    const wrong = await userToken('alice', 'not-the-password');
    expectUnauthorized(wrong, /username or password/);
    expect(JSON.stringify(wrong.body)).not.toContain('access_token');
    const unknownUser = await userToken('mallory', 'whatever');
    expect(expectUnauthorized(unknownUser).detail, 'unknown users are indistinguishable from wrong passwords').toBe(
      (wrong.body as Problem).detail,
    );

    const missingPassword = expectProblem(
      await call(`${local.service.auth}/token`, { json: { username: 'alice' } }),
      400,
      /username.*password/,
    );
    expectViolation(missingPassword, '/password');
    const notJson = await call(`${local.service.auth}/token`, {
      body: '{"username": "alice", ',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(notJson, 400, /not valid JSON/);
    // A form body is the devices' client credentials grant: without grant_type it is an OAuth invalid_request.
    const form = await call(`${local.service.auth}/token`, {
      body: 'username=alice&password=alice-demo-password',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([form.status, form.body.error]).toEqual([400, 'invalid_request']);
    const text = await call(`${local.service.auth}/token`, { body: 'alice', headers: { 'content-type': 'text/plain' } });
    expectProblem(text, 400, /application\/json or application\/x-www-form-urlencoded/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Authorization (403)
// ---------------------------------------------------------------------------------------------------------------

describe('403: valid token without the company or the scope', () => {
  it('bob (globex) cannot touch acme: skeleton, deploy, list, upload', async () => {
    expectProblem(
      await as(local.tokens.bob).main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
        params: { path: { companyId: 'acme' } },
      }),
      403,
      /company 'acme'/,
    );
    expectProblem(
      await postDeployments(local.tokens.bob, 'acme', [entry('acme-kiosk-0002', 'acme-welcome', '1.0.0')]),
      403,
      /company 'acme'/,
    );
    expectProblem(await listDeployments(local.tokens.bob, 'acme'), 403, /company 'acme'/);
    expectProblem(await listDeviceDeployments(local.tokens.bob, 'acme', 'acme-kiosk-0002'), 403, /company 'acme'/);
    expectProblem(
      await uploadArchive(local.service, local.tokens.bob, 'acme', await validArchive('e2e-bob-intrusion', '1.0.0')),
      403,
      /company 'acme'/,
    );
    // Nothing happened in acme.
    expect(await deviceDeployments(local.tokens.alice, 'acme', 'acme-kiosk-0002')).toEqual([]);
    // The refused upload stored nothing: alice can upload the same (id, version).
    expect(
      (await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive('e2e-bob-intrusion', '1.0.0'))).response.status,
    ).toBe(201);
  });

  it('olivia (read-only scopes) cannot deploy or upload, but can read', async () => {
    expectProblem(
      await postDeployments(local.tokens.olivia, 'acme', [entry('acme-kiosk-0003', 'acme-welcome', '1.0.0')]),
      403,
      /deployments:write/,
    );
    expectProblem(
      await uploadArchive(local.service, local.tokens.olivia, 'acme', await validArchive('e2e-olivia', '1.0.0')),
      403,
      /scenarios:write/,
    );
    expectProblem(
      await uploadArchive(local.service, local.tokens.olivia, 'globex', await validArchive('e2e-olivia', '1.0.0')),
      403,
      /scenarios:write/,
    );
    expect(await deviceDeployments(local.tokens.olivia, 'acme', 'acme-kiosk-0003')).toEqual([]);
  });

  it('alice searching with company=globex gets 403, also on the filters endpoint', async () => {
    const search = (query: { company: string[]; pageSize?: number }) =>
      as(local.tokens.alice).main.GET('/resources/search', { params: { query } });
    expectProblem(await search({ company: ['globex'] }), 403, /globex/);
    expectProblem(await search({ company: ['acme', 'globex'] }), 403, /globex/);
    expectProblem(
      await as(local.tokens.alice).main.GET('/resources/search/filters', { params: { query: { company: ['globex'] } } }),
      403,
      /globex/,
    );
    // Control: her own company is fine.
    expect((await search({ company: ['acme'], pageSize: 1 })).response.status).toBe(200);
  });
});
