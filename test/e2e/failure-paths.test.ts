/**
 * End-to-end failure paths over real HTTP against one local service (`bin/local.ts`): authentication (401),
 * authorization (403), archive validation (422), quota (413), immutability (409), deployment request validation
 * (400) and per-item causes, concurrency on the embedded DynamoDB, active deployment listing, and search/filters
 * parameter validation. Every error must be an RFC 9457 problem (docs/contract.md, "Errors").
 *
 * Requests the typed client can express go through it (clientFor); the others are hand-built with `call` on purpose:
 * missing, forged or foreign-scheme tokens, bodies that are not JSON or not of the documented shape, parameters the
 * document does not have or values of the wrong type, routes sent to the wrong address or with the wrong method.
 */
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';
import JSZip from 'jszip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIRECT_UPLOAD_LIMIT_TEXT } from '../../functions/contract/archives.js';
import { type components, expectOk } from '../../client/index.js';
import {
  answerOf,
  call,
  clientFor,
  eventually,
  type JsonResult,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
  type TypedResult,
  uploadArchive,
} from './harness.js';

const AUDIENCE = 'device-scenario-service';
const FULL_SCOPE = 'scenarios:read scenarios:write deployments:read deployments:write search:read devices:write';
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const MiB = 1024 * 1024;
const GLOBEX_QUOTA = 5_242_880;
type SigningKey = Awaited<ReturnType<typeof importJWK>>;

let settings: ServiceSettings;
let service: LocalService;
let alice: string;
let bob: string;
let olivia: string;

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings);
  [alice, bob, olivia] = await Promise.all([tokenFor(service, 'alice'), tokenFor(service, 'bob'), tokenFor(service, 'olivia')]);
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
}, 120_000);

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: { path: string; message: string }[];
  [extension: string]: unknown;
}

/** Asserts an RFC 9457 problem with `status` and a `detail` matching `detail`; returns its body. */
function expectProblem(answer: JsonResult | TypedResult, status: number, detail?: RegExp): Problem {
  const result = answerOf(answer);
  expect(result.status, `unexpected status; body: ${JSON.stringify(result.body)}`).toBe(status);
  expect(result.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json\b/);
  const body = result.body as Problem;
  expect(body).toMatchObject({
    status,
    type: expect.stringMatching(/^https?:\/\//),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(body.detail.length).toBeGreaterThan(10);
  if (detail !== undefined) expect(body.detail).toMatch(detail);
  return body;
}

/** Asserts a 400 problem whose `errors` has an entry at `path` (message matching `message` when given). */
function expectViolation(problem: Problem, path: string, message?: RegExp): void {
  expect(problem.errors, `errors of ${JSON.stringify(problem)}`).toBeInstanceOf(Array);
  const found = (problem.errors ?? []).filter((error) => error.path === path);
  expect(found.length, `no violation at '${path}' in ${JSON.stringify(problem.errors)}`).toBeGreaterThan(0);
  if (message !== undefined)
    expect(
      found.some((error) => message.test(error.message)),
      `no message ${message} at '${path}': ${JSON.stringify(found)}`,
    ).toBe(true);
}

function expectUnauthorized(result: JsonResult, detail?: RegExp): Problem {
  const problem = expectProblem(result, 401, detail);
  expect(result.headers.get('www-authenticate') ?? '').toMatch(/^Bearer\b/);
  return problem;
}

function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** Claims of a well-formed alice token (iss/aud are set by the signer helpers). */
function aliceClaims(): Record<string, unknown> {
  return { companies: ['acme'], scope: FULL_SCOPE };
}

async function realSigningKey(): Promise<{ key: SigningKey; kid: string; publicJwk: JWK }> {
  const jwk = JSON.parse(await readFile(join(service.dataDirectory, 'auth', 'signing-key.json'), 'utf8')) as JWK;
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
    .setIssuer(options.issuer ?? service.auth)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(options.iat ?? now)
    .setExpirationTime(options.exp ?? now + 600)
    .sign(key);
}

/** A search request (needs only `search:read`): the probe for authentication outcomes. */
function searchWith(headers: Record<string, string>): Promise<JsonResult> {
  return call(`${service.api}/resources/search?pageSize=1`, { headers });
}

interface Manifest {
  id?: unknown;
  name?: unknown;
  version?: unknown;
  description?: unknown;
  thumbnails?: unknown;
  assets?: unknown;
  [other: string]: unknown;
}

/** Builds a ZIP. `files` values: string/bytes contents; `store` uses no compression. Folders are never auto-added. */
async function buildZip(files: Record<string, string | Uint8Array>, store = false): Promise<Uint8Array> {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(files)) zip.file(name, content, { createFolders: false });
  return zip.generateAsync({ type: 'uint8array', compression: store ? 'STORE' : 'DEFLATE' });
}

const THUMBNAIL_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>';
const INDEX_HTML = '<!doctype html><title>e2e</title><h1>e2e</h1>';

/** A valid scenario archive (thumbnail + asset present), optionally with extra files. */
async function validArchive(
  id: string,
  version: string,
  extra: Record<string, string | Uint8Array> = {},
  store = false,
): Promise<Uint8Array> {
  const assets = ['resources/assets/index.html', ...Object.keys(extra).filter((name) => name.startsWith('resources/assets/'))];
  return buildZip(
    {
      'scenario.json': JSON.stringify({
        id,
        name: `E2E ${id}`,
        version,
        description: 'failure-path test',
        thumbnails: ['resources/thumbnails/t.svg'],
        assets,
      }),
      'resources/thumbnails/t.svg': THUMBNAIL_SVG,
      'resources/assets/index.html': INDEX_HTML,
      ...extra,
    },
    store,
  );
}

type DeploymentEntry = components['schemas']['DeploymentRequest'];
type ResultItem = components['schemas']['DeploymentResultItem'];
/**
 * An active deployment as the typed client gives it: openapi-fetch's response types drop members whose schema type is
 * exactly `null` (here `cause`), though the body has them and the contract check requires them.
 */
type ListedItem = Omit<components['schemas']['ActiveDeployment'], 'cause'>;

/** The typed client as the holder of `token`; answers are checked against the document. */
const as = (token: string) => clientFor(service, token);

/** Active deployments this file created, per company: `device#scenario#version`. Kept from every SUCCESS item. */
const activeByCompany = new Map<string, Set<string>>([
  ['acme', new Set()],
  ['globex', new Set()],
]);
/** Every deployment result id seen, to prove ids are fresh. */
const seenIds = new Set<string>();

function entry(device: string, scenario: string, version: string, action: 'DEPLOY' | 'UNDEPLOY' = 'DEPLOY'): DeploymentEntry {
  return { target: { type: 'DEVICE', id: device, subId: null }, what: { type: 'SCENARIO', id: scenario, subId: version }, action };
}

/** POSTs a deployment request through the typed client: the whole answer. */
function postDeployments(token: string, company: string, requests: DeploymentEntry[], note?: string) {
  return as(token).main.POST('/companies/{companyId}/resources/deployments', {
    params: { path: { companyId: company } },
    body: { requests, ...(note === undefined ? {} : { note }) },
  });
}

/** A company's active deployments (one page) through the typed client: the whole answer. */
function listDeployments(token: string, company: string, query: { limit?: number; cursor?: string } = {}) {
  return as(token).main.GET('/companies/{companyId}/resources/DEVICE/deployments', { params: { path: { companyId: company }, query } });
}

/** A device's active deployments (one page) through the typed client: the whole answer. */
function listDeviceDeployments(token: string, company: string, deviceId: string, query: { limit?: number; cursor?: string } = {}) {
  return as(token).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
    params: { path: { companyId: company, deviceId }, query },
  });
}

/** POSTs a deployment request, asserts 200 with one fresh-id item per entry in order, and tracks SUCCESS items. */
async function deploy(token: string, company: string, requests: DeploymentEntry[], note?: string): Promise<ResultItem[]> {
  const result = await postDeployments(token, company, requests, note);
  expect(result.response.status, JSON.stringify(result.error)).toBe(200);
  expect(result.response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/);
  const items = expectOk(result).items;
  expect(items).toHaveLength(requests.length);
  items.forEach((item, index) => {
    const request = requests[index] as DeploymentEntry;
    expect(item.id).toMatch(ULID);
    expect(seenIds.has(item.id), `id ${item.id} reused`).toBe(false);
    seenIds.add(item.id);
    expect(item.target.id).toBe(request.target.id);
    expect(item.target.type).toBe(request.target.type);
    expect(item.what).toEqual({ type: request.what.type, id: request.what.id, subId: request.what.subId });
    expect(item.action).toBe(request.action);
    if (item.state === 'SUCCESS') {
      expect(item.cause).toBeNull();
      const key = `${item.target.id}#${item.what.id}#${item.what.subId}`;
      const active = activeByCompany.get(company) as Set<string>;
      if (item.action === 'DEPLOY') active.add(key);
      else active.delete(key);
    } else {
      expect(item.cause).toEqual(expect.any(String));
    }
  });
  return items;
}

/** Follows `nextCursor` through a company's active deployments with `limit`, returning every page. */
async function listAllPages(token: string, company: string, limit: number): Promise<{ items: ListedItem[]; nextCursor: string | null }[]> {
  const pages: { items: ListedItem[]; nextCursor: string | null }[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: ListedItem[]; nextCursor: string | null } = expectOk(
      await listDeployments(token, company, cursor === null ? { limit } : { limit, cursor }),
    );
    expect(page.items.length).toBeLessThanOrEqual(limit);
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length, 'pagination does not terminate').toBeLessThan(1_000);
  } while (cursor !== null);
  return pages;
}

function keysOf(items: ListedItem[]): string[] {
  return items.map((item) => `${item.target.id}#${item.what.id}#${item.what.subId}`);
}

async function deviceDeployments(token: string, company: string, device: string): Promise<ListedItem[]> {
  const result = expectOk(await listDeviceDeployments(token, company, device, { limit: 1000 }));
  expect(result.nextCursor).toBeNull();
  return result.items;
}

async function companyDeployments(token: string, company: string): Promise<ListedItem[]> {
  return (await listAllPages(token, company, 1000)).flatMap((page) => page.items);
}

// ---------------------------------------------------------------------------------------------------------------
// 1. Authentication (401)
// ---------------------------------------------------------------------------------------------------------------

describe('401: missing, malformed or untrusted bearer tokens', () => {
  it('accepts a token the test signs itself with the real local key (control for the forgeries below)', async () => {
    const { key, kid } = await realSigningKey();
    const result = await searchWith({ authorization: `Bearer ${await signEs256(key, { kid })}` });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
  });

  it('refuses a request without an Authorization header on every address', async () => {
    const probes = [
      call(`${service.api}/resources/search`),
      call(`${service.api}/resources/search/filters`),
      call(`${service.api}/companies/acme/resources/DEVICE/deployments`),
      call(`${service.api}/companies/acme/resources/deployments`, {
        json: { requests: [entry('acme-kiosk-0001', 'acme-welcome', '1.0.0')] },
      }),
      call(`${service.api}/companies/acme/resources/scenarios/skeleton.zip`),
      call(`${service.upload}/companies/acme/resources/scenarios`, {
        method: 'POST',
        body: new Uint8Array([1, 2, 3]),
        headers: { 'content-type': 'application/zip' },
      }),
    ];
    for (const result of await Promise.all(probes)) expectUnauthorized(result, /Authorization: Bearer/);
    // Nothing was deployed by the unauthenticated POST.
    expect(await deviceDeployments(alice, 'acme', 'acme-kiosk-0001')).toEqual([]);
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
      const token = `${base64url(header)}.${base64url({ ...aliceClaims(), sub: 'alice', iss: service.auth, aud: AUDIENCE, iat: now, exp: now + 600 })}.`;
      expectUnauthorized(await searchWith({ authorization: `Bearer ${token}` }), /not valid/);
    }
  });

  it('refuses HS256 tokens, including one keyed with the published public key (algorithm confusion)', async () => {
    const { kid, publicJwk } = await realSigningKey();
    const jwks = expectOk(await clientFor(service).auth.GET('/.well-known/jwks.json'));
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
        .setIssuer(service.auth)
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
        .setIssuer(service.auth)
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
      .setIssuer(service.auth)
      .setAudience(AUDIENCE)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(key);
    expectUnauthorized(await searchWith({ authorization: `Bearer ${noCompanies}` }), /companies/);
  });

  it('POST /token: wrong password → 401 problem; malformed body → 400 problem', async () => {
    const userToken = async (username: string, password: string) =>
      answerOf(await clientFor(service).auth.POST('/token', { body: { username, password } }));
    const wrong = await userToken('alice', 'not-the-password');
    expectUnauthorized(wrong, /username or password/);
    expect(JSON.stringify(wrong.body)).not.toContain('access_token');
    const unknownUser = await userToken('mallory', 'whatever');
    expect(expectUnauthorized(unknownUser).detail, 'unknown users are indistinguishable from wrong passwords').toBe(
      (wrong.body as Problem).detail,
    );

    const missingPassword = expectProblem(await call(`${service.auth}/token`, { json: { username: 'alice' } }), 400, /username.*password/);
    expectViolation(missingPassword, '/password');
    const notJson = await call(`${service.auth}/token`, {
      body: '{"username": "alice", ',
      headers: { 'content-type': 'application/json' },
    });
    expectProblem(notJson, 400, /not valid JSON/);
    // A form body is the devices' client credentials grant: without grant_type it is an OAuth invalid_request.
    const form = await call(`${service.auth}/token`, {
      body: 'username=alice&password=alice-demo-password',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect([form.status, form.body.error]).toEqual([400, 'invalid_request']);
    const text = await call(`${service.auth}/token`, { body: 'alice', headers: { 'content-type': 'text/plain' } });
    expectProblem(text, 400, /application\/json or application\/x-www-form-urlencoded/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 2. Authorization (403)
// ---------------------------------------------------------------------------------------------------------------

describe('403: valid token without the company or the scope', () => {
  it('bob (globex) cannot touch acme: skeleton, deploy, list, upload', async () => {
    expectProblem(
      await as(bob).main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', { params: { path: { companyId: 'acme' } } }),
      403,
      /company 'acme'/,
    );
    expectProblem(await postDeployments(bob, 'acme', [entry('acme-kiosk-0002', 'acme-welcome', '1.0.0')]), 403, /company 'acme'/);
    expectProblem(await listDeployments(bob, 'acme'), 403, /company 'acme'/);
    expectProblem(await listDeviceDeployments(bob, 'acme', 'acme-kiosk-0002'), 403, /company 'acme'/);
    expectProblem(await uploadArchive(service, bob, 'acme', await validArchive('e2e-bob-intrusion', '1.0.0')), 403, /company 'acme'/);
    // Nothing happened in acme.
    expect(await deviceDeployments(alice, 'acme', 'acme-kiosk-0002')).toEqual([]);
    // The refused upload stored nothing: alice can upload the same (id, version).
    expect((await uploadArchive(service, alice, 'acme', await validArchive('e2e-bob-intrusion', '1.0.0'))).response.status).toBe(201);
  });

  it('olivia (read-only scopes) cannot deploy or upload, but can read', async () => {
    expectProblem(await postDeployments(olivia, 'acme', [entry('acme-kiosk-0003', 'acme-welcome', '1.0.0')]), 403, /deployments:write/);
    expectProblem(await uploadArchive(service, olivia, 'acme', await validArchive('e2e-olivia', '1.0.0')), 403, /scenarios:write/);
    expectProblem(await uploadArchive(service, olivia, 'globex', await validArchive('e2e-olivia', '1.0.0')), 403, /scenarios:write/);
    expect(await deviceDeployments(olivia, 'acme', 'acme-kiosk-0003')).toEqual([]);
  });

  it('alice searching with company=globex gets 403, also on the filters endpoint', async () => {
    const search = (query: { company: string[]; pageSize?: number }) => as(alice).main.GET('/resources/search', { params: { query } });
    expectProblem(await search({ company: ['globex'] }), 403, /globex/);
    expectProblem(await search({ company: ['acme', 'globex'] }), 403, /globex/);
    expectProblem(await as(alice).main.GET('/resources/search/filters', { params: { query: { company: ['globex'] } } }), 403, /globex/);
    // Control: her own company is fine.
    expect((await search({ company: ['acme'], pageSize: 1 })).response.status).toBe(200);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 3. Archive validation (422) and 5. immutability (409)
// ---------------------------------------------------------------------------------------------------------------

describe('422: invalid scenario archives are refused with every violation, and nothing is stored', () => {
  /** (id, version) used by rejected archives whose manifest is valid; uploaded for real at the end. */
  const REJECTED = { id: 'e2e-rejected', version: '2.0.0' } as const;
  const manifest = (overrides: Manifest = {}): string =>
    JSON.stringify({
      id: REJECTED.id,
      name: 'Rejected',
      version: REJECTED.version,
      thumbnails: ['resources/thumbnails/t.svg'],
      assets: ['resources/assets/index.html'],
      ...overrides,
    });
  const resources = { 'resources/thumbnails/t.svg': THUMBNAIL_SVG, 'resources/assets/index.html': INDEX_HTML };

  async function expectInvalid(archive: Uint8Array): Promise<Problem> {
    const problem = expectProblem(await uploadArchive(service, alice, 'acme', archive), 422, /nothing was stored|not a readable ZIP/);
    expect(problem.errors, JSON.stringify(problem)).toBeInstanceOf(Array);
    expect(problem.errors?.length).toBeGreaterThan(0);
    for (const error of problem.errors ?? []) expect(error).toEqual({ path: expect.any(String), message: expect.any(String) });
    return problem;
  }

  it('not a ZIP (random bytes)', async () => {
    const problem = await expectInvalid(randomBytes(4096));
    expect(problem.detail).toMatch(/not a readable ZIP/);
    expect(problem.errors?.[0]?.message).toMatch(/not a valid ZIP/);
  });

  it('scenario.json missing', async () => {
    const problem = await expectInvalid(await buildZip({ 'README.md': 'no manifest', ...resources }));
    expect(problem.errors).toEqual([{ path: 'scenario.json', message: expect.stringMatching(/missing/) }]);
  });

  it('scenario.json not JSON', async () => {
    const problem = await expectInvalid(await buildZip({ 'scenario.json': '{ "id": "e2e-rejected", ', ...resources }));
    expect(problem.errors).toEqual([{ path: 'scenario.json', message: expect.stringMatching(/not valid JSON/) }]);
  });

  it('scenario.json schema violations: missing name, version "1.0", unknown property', async () => {
    const missingName = JSON.parse(manifest()) as Manifest;
    delete missingName.name;
    let problem = await expectInvalid(await buildZip({ 'scenario.json': JSON.stringify(missingName), ...resources }));
    expect(problem.errors?.map((error) => error.path)).toEqual(['scenario.json#/name']);

    problem = await expectInvalid(await buildZip({ 'scenario.json': manifest({ version: '1.0' }), ...resources }));
    expect(problem.errors).toEqual([{ path: 'scenario.json#/version', message: expect.stringMatching(/semantic version/) }]);

    problem = await expectInvalid(await buildZip({ 'scenario.json': manifest({ colour: 'blue' }), ...resources }));
    expect(problem.errors).toHaveLength(1);
    expect(problem.errors?.[0]?.path).toMatch(/^scenario\.json#\//);
    expect(problem.errors?.[0]?.message, 'the unknown property is named').toContain('colour');
  });

  it('resources/ missing', async () => {
    const problem = await expectInvalid(await buildZip({ 'scenario.json': manifest({ thumbnails: [], assets: [] }) }));
    expect(problem.errors).toEqual([{ path: 'resources/', message: expect.stringMatching(/resources\/ directory is missing/) }]);
  });

  it('a referenced thumbnail absent', async () => {
    const problem = await expectInvalid(
      await buildZip({ 'scenario.json': manifest({ thumbnails: ['resources/thumbnails/missing.png'] }), ...resources }),
    );
    expect(problem.errors).toEqual([
      { path: 'scenario.json#/thumbnails/0', message: expect.stringContaining('resources/thumbnails/missing.png') },
    ]);
  });

  it('an entry name with a ".." segment (zip slip) is refused', async () => {
    // JSZip writes the raw name (checked below), so the stored archive really holds "resources/../../evil.sh".
    const archive = await buildZip({
      'scenario.json': JSON.stringify({ id: 'e2e-zip-slip', name: 'Zip slip', version: '1.0.0' }),
      ...resources,
      'resources/../../evil.sh': '#!/bin/sh\nrm -rf /\n',
    });
    expect(Buffer.from(archive).includes(Buffer.from('resources/../../evil.sh')), 'the raw ".." name is in the ZIP bytes').toBe(true);
    const result = await uploadArchive(service, alice, 'acme', archive);
    // Regression guard for a product bug found at HEAD (functions/core/scenarios/archive.ts, validateScenarioArchive):
    // JSZip >= 3.8 loadAsync sanitizes entry names (`resources/../../evil.sh` becomes `evil.sh`; the raw name is only in
    // `unsafeOriginalName`), so checking Object.keys(zip.files) never saw "..", and the archive was stored (201) with its
    // zip-slip entry intact. The check must run on unsafeOriginalName.
    expect(result.response.status, `a ".." entry must be refused with 422; got ${JSON.stringify(answerOf(result))}`).toBe(422);
    const problem = expectProblem(result, 422);
    expect(
      problem.errors?.some((error) => error.path.includes('..')),
      JSON.stringify(problem.errors),
    ).toBe(true);
  });

  it('one archive with many violations lists every one with its path', async () => {
    const archive = await buildZip({
      // name missing, version not semver, unknown property, a thumbnail path with "..", an asset outside resources/
      'scenario.json': JSON.stringify({
        id: REJECTED.id,
        version: '1.0',
        colour: 'blue',
        thumbnails: ['resources/../secret.png'],
        assets: ['assets/index.html'],
      }),
      '/etc/passwd': 'root:x:0:0', // absolute path
      'C:/autoexec.bat': 'echo', // drive letter
      'dir\\evil.txt': 'backslash', // backslash
      // and no resources/ directory at all
    });
    const problem = await expectInvalid(archive);
    const paths = (problem.errors ?? []).map((error) => error.path).sort();
    expect(paths).toEqual(
      [
        '/etc/passwd',
        'C:/autoexec.bat',
        'dir\\evil.txt',
        'resources/',
        'scenario.json#/colour',
        'scenario.json#/assets/0',
        'scenario.json#/name',
        'scenario.json#/thumbnails/0',
        'scenario.json#/version',
      ].sort(),
    );
    const message = (path: string) => problem.errors?.find((error) => error.path === path)?.message ?? '';
    expect(message('/etc/passwd')).toMatch(/absolute/);
    expect(message('C:/autoexec.bat')).toMatch(/drive letter/);
    expect(message('dir\\evil.txt')).toMatch(/backslash/);
    expect(message('scenario.json#/colour')).toContain('colour');
    expect(message('scenario.json#/thumbnails/0')).toMatch(/\.\./);
    expect(message('scenario.json#/assets/0')).toMatch(/resources\//);
    expect(problem.detail).toContain(`${problem.errors?.length} problem(s)`);
  });

  it('multipart without a payload part → 400', async () => {
    const form = new FormData();
    form.append('other', new Blob([await validArchive(REJECTED.id, REJECTED.version)], { type: 'application/zip' }), 'x.zip');
    const problem = expectProblem(
      await call(`${service.upload}/companies/acme/resources/scenarios`, { token: alice, body: form }),
      400,
      /payload/,
    );
    expectViolation(problem, 'payload');
  });

  it('multipart with the payload part given twice → 400', async () => {
    const archive = await validArchive(REJECTED.id, REJECTED.version);
    const form = new FormData();
    form.append('payload', new Blob([archive], { type: 'application/zip' }), 'a.zip');
    form.append('payload', new Blob([archive], { type: 'application/zip' }), 'b.zip');
    const problem = expectProblem(
      await call(`${service.upload}/companies/acme/resources/scenarios`, { token: alice, body: form }),
      400,
      /payload/,
    );
    expectViolation(problem, 'payload', /more than once/);
  });

  it('after all rejections the service still answers and nothing was stored: the rejected (id, version) uploads with 201', async () => {
    const stored = await uploadArchive(service, alice, 'acme', await validArchive(REJECTED.id, REJECTED.version));
    expect(stored.response.status, JSON.stringify(stored.error)).toBe(201);
    expect(stored.data).toMatchObject({
      id: REJECTED.id,
      version: REJECTED.version,
      size: expect.any(Number),
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(stored.response.headers.get('location')).toContain(`/scenarios/${REJECTED.id}/versions/${REJECTED.version}`);
    // And it is deployable now (it was not before).
    const [item] = await deploy(alice, 'acme', [entry('acme-kiosk-0004', REJECTED.id, REJECTED.version)]);
    expect(item).toMatchObject({ state: 'SUCCESS', cause: null });
  });

  it('409 on re-upload of an existing (id, version): the demo acme-welcome 1.0.0 rebuilt', async () => {
    const archive = await buildZip({
      'scenario.json': JSON.stringify({
        id: 'acme-welcome',
        name: 'Acme welcome screen',
        version: '1.0.0',
        thumbnails: ['resources/thumbnails/thumbnail.svg'],
        assets: ['resources/assets/index.html'],
      }),
      'resources/thumbnails/thumbnail.svg': THUMBNAIL_SVG,
      'resources/assets/index.html': '<!doctype html><title>overwrite attempt</title>',
    });
    expectProblem(await uploadArchive(service, alice, 'acme', archive), 409, /acme-welcome.*1\.0\.0.*already exists/);
    // Same for a version this file stored itself.
    expectProblem(await uploadArchive(service, alice, 'acme', await validArchive(REJECTED.id, REJECTED.version)), 409, /immutable/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 4. Quota (413)
// ---------------------------------------------------------------------------------------------------------------

describe('413: archives too large for a direct upload', () => {
  it('refuses an archive above 4 MiB in the handler, and a body above the Lambda payload limit in the gateway; nothing is stored', async () => {
    const overArchiveLimit = await validArchive(
      'e2e-too-large',
      '1.0.0',
      { 'resources/assets/blob.bin': randomBytes(4 * MiB + 64 * 1024) },
      true,
    );
    const refused = await uploadArchive(service, alice, 'acme', overArchiveLimit);
    expect(refused.response.status).toBe(413);
    expect(refused.response.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.error).toMatchObject({ title: 'Payload Too Large', status: 413 });
    expect(refused.error?.detail).toMatch(/presigned upload slot/);
    // The limit is stated in the same words by the 413 and by docs/contract.md.
    const readme = await readFile(join(import.meta.dirname, '../../docs/contract.md'), 'utf8');
    expect(refused.error?.detail).toContain(DIRECT_UPLOAD_LIMIT_TEXT);
    expect(readme).toContain(`limited to ${DIRECT_UPLOAD_LIMIT_TEXT}:`);

    const overEventLimit = await validArchive('e2e-too-large', '1.0.0', { 'resources/assets/blob.bin': randomBytes(5 * MiB) }, true);
    const gateway = await uploadArchive(service, alice, 'acme', overEventLimit);
    expect(gateway.response.status).toBe(413);
    expect(gateway.error).toMatchObject({ title: 'Payload Too Large', status: 413 });

    const small = await uploadArchive(service, alice, 'acme', await validArchive('e2e-too-large', '1.0.0'));
    expect(small.response.status).toBe(201);
  });
});

describe('413: globex storage quota (5 MiB)', () => {
  const bigArchive = (version: string, bytes: number) =>
    validArchive('e2e-quota', version, { 'resources/assets/blob.bin': randomBytes(bytes) }, true);

  it('3 MiB fits, a second 3 MiB is refused with the figures, and the refusal consumed nothing', async () => {
    const first = await uploadArchive(service, bob, 'globex', await bigArchive('1.0.0', 3 * MiB));
    expect(first.response.status, JSON.stringify(first.error)).toBe(201);
    const firstSize = expectOk(first).size;
    expect(firstSize).toBeGreaterThanOrEqual(3 * MiB);

    const secondArchive = await bigArchive('2.0.0', 3 * MiB);
    const refused = expectProblem(await uploadArchive(service, bob, 'globex', secondArchive), 413, /quota/);
    expect(refused.quotaBytes).toBe(GLOBEX_QUOTA);
    expect(refused.usedBytes).toEqual(expect.any(Number));
    const usedAfterFirst = refused.usedBytes as number;
    expect(usedAfterFirst).toBeGreaterThanOrEqual(3 * MiB);
    expect(usedAfterFirst, 'used = demo archives (a few KB) + the first upload').toBeLessThan(firstSize + 64 * 1024);
    expect(refused.archiveBytes).toBe(secondArchive.byteLength);

    // A small version (the same version number that was refused) fits: the refused one stored and charged nothing.
    const small = await uploadArchive(service, bob, 'globex', await validArchive('e2e-quota', '2.0.0'));
    expect(small.response.status, JSON.stringify(small.error)).toBe(201);
    const smallSize = expectOk(small).size;

    // usedBytes moved by exactly the small archive.
    const again = expectProblem(await uploadArchive(service, bob, 'globex', await bigArchive('3.0.0', 3 * MiB)), 413);
    expect(again.usedBytes).toBe(usedAfterFirst + smallSize);
    expect(again.quotaBytes).toBe(GLOBEX_QUOTA);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 6. Deployment request validation (400) and per-item causes
// ---------------------------------------------------------------------------------------------------------------

describe('deployments: 400 for structurally invalid bodies (nothing changed), FAILURE causes per item', () => {
  const DEVICE = 'acme-kiosk-0010';
  const valid = entry(DEVICE, 'acme-welcome', '1.0.0');
  const url = () => `${service.api}/companies/acme/resources/deployments`;

  it('each invalid body is a 400 problem and changes nothing', async () => {
    // Hand-built: none of these bodies is of the documented shape, which the typed client would refuse to send.
    const deviceBefore = await deviceDeployments(alice, 'acme', DEVICE);
    const companyBefore = await companyDeployments(alice, 'acme');

    expectProblem(
      await call(url(), { token: alice, body: '{"requests": [', headers: { 'content-type': 'application/json' } }),
      400,
      /not valid JSON/,
    );
    expectProblem(
      await call(url(), { token: alice, body: JSON.stringify({ requests: [valid] }), headers: { 'content-type': 'text/plain' } }),
      400,
      /application\/json.*text\/plain/,
    );
    expectProblem(await call(url(), { token: alice, body: JSON.stringify({ requests: [valid] }) }), 400, /application\/json/);

    const invalid = /invalid; nothing was changed/;
    expectViolation(expectProblem(await call(url(), { token: alice, json: { note: 'no requests' } }), 400, invalid), '/requests');
    expectViolation(expectProblem(await call(url(), { token: alice, json: { requests: [] } }), 400, invalid), '/requests');
    expectViolation(expectProblem(await call(url(), { token: alice, json: [valid] }), 400, invalid), '/');
    expectViolation(
      expectProblem(await call(url(), { token: alice, json: { requests: [valid, { ...valid, action: 'REDEPLOY' }] } }), 400, invalid),
      '/requests/1/action',
      /DEPLOY/,
    );
    expectViolation(
      expectProblem(
        await call(url(), { token: alice, json: { requests: [valid, { ...valid, what: { type: 'SCENARIO', id: 'acme-welcome' } }] } }),
        400,
        invalid,
      ),
      '/requests/1/what/subId',
    );
    // Several violations at once are all listed.
    const many = expectProblem(
      await call(url(), {
        token: alice,
        json: {
          requests: [valid, { target: { type: 'DEVICE' }, what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' }, action: 'PUSH' }],
        },
      }),
      400,
      invalid,
    );
    expectViolation(many, '/requests/1/target/id');
    expectViolation(many, '/requests/1/action');

    expect(await deviceDeployments(alice, 'acme', DEVICE)).toEqual(deviceBefore);
    expect(await companyDeployments(alice, 'acme')).toEqual(companyBefore);
    expect(deviceBefore).toEqual([]);
  });

  it('a body declared in a charset other than UTF-8 is 415 and changes nothing; UTF-8 declared is read', async () => {
    // Hand-built: the typed client sends UTF-8 JSON only.
    const text = JSON.stringify({ requests: [valid] });
    const utf16 = new Uint8Array(Buffer.from(`\ufeff${text}`, 'utf16le'));
    for (const contentType of [
      'application/json; charset=utf-16',
      'application/json; charset="UTF-16LE"',
      'application/json;charset=latin1',
    ]) {
      const refused = expectProblem(
        await call(url(), { token: alice, body: utf16, headers: { 'content-type': contentType } }),
        415,
        /read as UTF-8 only/,
      );
      expect(refused.title).toBe('Unsupported Media Type');
    }
    expect(await deviceDeployments(alice, 'acme', DEVICE)).toEqual([]);
    const devicePut = await call(`${service.api}/companies/acme/resources/devices/${DEVICE}`, {
      method: 'PUT',
      token: alice,
      body: new Uint8Array(Buffer.from(JSON.stringify({ serial: 'SN-UTF16' }), 'utf16le')),
      headers: { 'content-type': 'application/json; charset=utf-16le' },
    });
    expectProblem(devicePut, 415, /UTF-8/);

    const accepted = await call(url(), { token: alice, body: text, headers: { 'content-type': 'application/json; charset=UTF-8' } });
    expect(accepted.status).toBe(200);
    expect(await deviceDeployments(alice, 'acme', DEVICE)).toHaveLength(1);
    await deploy(alice, 'acme', [{ ...valid, action: 'UNDEPLOY' }]);
  });

  it('one mixed request reports every cause, in request order, each item with a fresh id', async () => {
    await deploy(alice, 'acme', [entry('acme-kiosk-0021', 'acme-welcome', '1.1.0')]);
    const requests: DeploymentEntry[] = [
      entry('acme-kiosk-0020', 'acme-welcome', '1.0.0'), // SUCCESS
      entry('acme-kiosk-9999', 'acme-welcome', '1.0.0'), // TARGET_NOT_FOUND: unknown device
      entry('globex-kiosk-0001', 'acme-welcome', '1.0.0'), // TARGET_NOT_FOUND: another company's device, not leaked
      entry('acme-kiosk-0020', 'acme-welcome', '9.9.9'), // WHAT_NOT_FOUND: unknown version
      entry('acme-kiosk-0020', 'no-such-scenario', '1.0.0'), // WHAT_NOT_FOUND: unknown scenario
      entry('acme-kiosk-0020', 'globex-timetable', '1.0.0'), // WHAT_NOT_FOUND: another company's scenario, not leaked
      entry('acme-kiosk-0021', 'acme-welcome', '1.1.0'), // ALREADY_DEPLOYED
      entry('acme-kiosk-0021', 'acme-welcome', '1.0.0', 'UNDEPLOY'), // ALREADY_UNDEPLOYED
      { ...entry('acme-kiosk-0022', 'acme-welcome', '1.0.0'), target: { type: 'GROUP', id: 'all-kiosks', subId: null } }, // NOT_IMPLEMENTED
      { ...entry('acme-kiosk-0022', 'acme-welcome', '1.0.0'), what: { type: 'FIRMWARE', id: 'fw', subId: '7.1' } }, // NOT_IMPLEMENTED
      entry('acme-kiosk-0020', 'acme-welcome', '1.0.0'), // ALREADY_DEPLOYED by the first entry of this very request
      entry('acme-kiosk-0021', 'acme-welcome', '1.1.0', 'UNDEPLOY'), // SUCCESS
    ];
    const items = await deploy(alice, 'acme', requests, 'e2e mixed request');
    expect(items.map((item) => [item.state, item.cause])).toEqual([
      ['SUCCESS', null],
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['FAILURE', 'TARGET_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
      ['FAILURE', 'WHAT_NOT_FOUND'],
      ['FAILURE', 'ALREADY_DEPLOYED'],
      ['FAILURE', 'ALREADY_UNDEPLOYED'],
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['FAILURE', 'NOT_IMPLEMENTED'],
      ['FAILURE', 'ALREADY_DEPLOYED'],
      ['SUCCESS', null],
    ]);
    expect(new Set(items.map((item) => item.id)).size).toBe(items.length);
    expect(items.map((item) => item.target.id)).toEqual(requests.map((request) => request.target.id));
    expect(items[8]?.target).toEqual({ type: 'GROUP', id: 'all-kiosks', subId: null });

    // The globex device was not touched and its existence was not revealed differently from an unknown device.
    expect(items[2]).toMatchObject({ state: items[1]?.state, cause: items[1]?.cause });
    expect(await deviceDeployments(bob, 'globex', 'globex-kiosk-0001')).toEqual([]);
    expect(keysOf(await deviceDeployments(alice, 'acme', 'acme-kiosk-0020'))).toEqual(['acme-kiosk-0020#acme-welcome#1.0.0']);
    expect(await deviceDeployments(alice, 'acme', 'acme-kiosk-0021')).toEqual([]);
    const listed = (await deviceDeployments(alice, 'acme', 'acme-kiosk-0020'))[0];
    expect(listed).toMatchObject({ id: items[0]?.id, deployedBy: 'alice', note: 'e2e mixed request', state: 'SUCCESS', cause: null });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 7. Concurrency on the embedded DynamoDB
// ---------------------------------------------------------------------------------------------------------------

describe('concurrency: identical requests racing on DynamoDB Local', () => {
  const DEVICE = 'acme-kiosk-0050';
  const race = (action: 'DEPLOY' | 'UNDEPLOY') =>
    Promise.all(Array.from({ length: 20 }, () => deploy(alice, 'acme', [entry(DEVICE, 'acme-welcome', '1.0.0', action)])));

  function tally(results: ResultItem[][]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [item] of results) {
      const key = item === undefined ? 'missing' : item.state === 'SUCCESS' ? 'SUCCESS' : String(item.cause);
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  it('20 concurrent DEPLOYs: exactly one SUCCESS, 19 ALREADY_DEPLOYED; then 20 UNDEPLOYs: one SUCCESS, 19 ALREADY_UNDEPLOYED', async () => {
    expect(await deviceDeployments(alice, 'acme', DEVICE)).toEqual([]);
    expect(tally(await race('DEPLOY'))).toEqual({ SUCCESS: 1, ALREADY_DEPLOYED: 19 });
    expect(keysOf(await deviceDeployments(alice, 'acme', DEVICE))).toEqual([`${DEVICE}#acme-welcome#1.0.0`]);

    expect(tally(await race('UNDEPLOY'))).toEqual({ SUCCESS: 1, ALREADY_UNDEPLOYED: 19 });
    expect(await deviceDeployments(alice, 'acme', DEVICE)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 8. Active deployment listing
// ---------------------------------------------------------------------------------------------------------------

describe('listing active deployments: cursor pagination and 400/404', () => {
  const DEVICES = ['acme-kiosk-0101', 'acme-kiosk-0102', 'acme-kiosk-0103', 'acme-kiosk-0104', 'acme-kiosk-0105'];

  it('limit=2 pages through exactly the active set, without duplicates, ending with nextCursor null', async () => {
    const items = await deploy(
      alice,
      'acme',
      DEVICES.map((device) => entry(device, 'acme-welcome', '1.0.0')),
      'listing',
    );
    expect(items.every((item) => item.state === 'SUCCESS')).toBe(true);

    const pages = await listAllPages(alice, 'acme', 2);
    const keys = keysOf(pages.flatMap((page) => page.items));
    const expected = [...(activeByCompany.get('acme') as Set<string>)];
    expect(expected.length).toBeGreaterThanOrEqual(DEVICES.length);
    expect(new Set(keys).size, `duplicates in ${JSON.stringify(keys)}`).toBe(keys.length);
    expect([...keys].sort()).toEqual([...expected].sort());
    expect(pages.at(-1)?.nextCursor).toBeNull();
    expect(pages.slice(0, -1).every((page) => page.items.length === 2 && typeof page.nextCursor === 'string')).toBe(true);
    expect(pages.length).toBe(Math.ceil(expected.length / 2));
    for (const item of pages.flatMap((page) => page.items)) {
      expect(item).toMatchObject({
        id: expect.stringMatching(ULID),
        action: 'DEPLOY',
        state: 'SUCCESS',
        cause: null,
        deployedBy: 'alice',
        target: { type: 'DEVICE', subId: null },
      });
    }
    // Another company's listing shows none of acme's deployments.
    const globex = await companyDeployments(bob, 'globex');
    expect(globex.filter((item) => item.target.id.startsWith('acme-'))).toEqual([]);
  });

  it('limit=0, limit=1001, a non-numeric limit and an unknown parameter → 400', async () => {
    expectViolation(expectProblem(await listDeployments(alice, 'acme', { limit: 0 }), 400), 'limit', /1 to 1000/);
    expectViolation(expectProblem(await listDeployments(alice, 'acme', { limit: 1001 }), 400), 'limit', /1 to 1000/);
    // Hand-built: a limit that is not a number, and parameters the listings do not have.
    const base = `${service.api}/companies/acme/resources/DEVICE/deployments`;
    expectViolation(expectProblem(await call(`${base}?limit=ten`, { token: alice }), 400), 'limit');
    expectViolation(expectProblem(await call(`${base}?colour=blue`, { token: alice }), 400), 'colour', /limit, cursor/);
    expectViolation(
      expectProblem(await call(`${service.api}/companies/acme/resources/acme-kiosk-0101/deployments?sort=id`, { token: alice }), 400),
      'sort',
    );
  });

  it('a tampered or foreign cursor → 400', async () => {
    const cursor = expectOk(await listDeployments(alice, 'acme', { limit: 1 })).nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const [payload, signature] = cursor.split('.') as [string, string];
    const decoded = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    // Another key under the signature the service issued.
    const forge = (value: unknown) => `${Buffer.from(JSON.stringify(value)).toString('base64url')}.${signature}`;

    const tampered = [
      'not-a-cursor',
      `${cursor.slice(0, -2)}!!`,
      payload, // the key without its signature
      forge({ ...decoded, pk: 'ACTIVE#globex' }), // another company's partition
      forge({ ...decoded, extra: 1 }),
      forge([]),
    ];
    for (const value of tampered) {
      const problem = expectProblem(await listDeployments(alice, 'acme', { cursor: value }), 400, /cursor/);
      expectViolation(problem, 'cursor');
    }
    // A company-wide cursor is valid for no device's listing, not even that of the device its page ended on.
    const lastDevice = (decoded.sk as string).split('#')[0] as string;
    for (const device of ['acme-kiosk-0102', lastDevice]) {
      expectProblem(await listDeviceDeployments(alice, 'acme', device, { cursor }), 400, /cursor/);
    }
  });

  it("an unknown device, or another company's device, → 404 problem", async () => {
    expectProblem(await listDeviceDeployments(alice, 'acme', 'acme-kiosk-9999'), 404, /acme-kiosk-9999/);
    const foreign = expectProblem(await listDeviceDeployments(alice, 'acme', 'globex-kiosk-0001'), 404);
    expect(foreign.detail).not.toMatch(/globex'/);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// 9. Search / filters parameter validation, routing
// ---------------------------------------------------------------------------------------------------------------

describe('search and filters: 400 for bad parameters; routing 404/405', () => {
  // Hand-built: the query strings as sent, most of them outside what the document allows.
  const search = (query: string) => call(`${service.api}/resources/search?${query}`, { token: alice });

  it('unknown parameter is named in errors[].path with the allowed ones', async () => {
    const problem = expectProblem(await search('colour=red'), 400, /colour/);
    expectViolation(problem, 'colour', /Allowed: .*connection\.state/);
  });

  it.each([
    ['pageSize=101', 'pageSize', /1 to 100/],
    ['pageSize=0', 'pageSize', /1 to 100/],
    ['page=0', 'page', /integer from 1/],
    ['page=-1', 'page', /integer from 1/],
    ['sort=colour', 'sort', /Allowed: serial/],
    ['direction=UP', 'direction', /ASC or DESC/],
    ['connection.state=SLEEPING', 'connection.state', /Allowed: UNKNOWN, CONNECTED, DISCONNECTED/],
    ['page=1000&pageSize=100', 'page', /10000/],
    ['page=1&page=2', 'page', /only once/],
  ])('%s → 400 naming %s', async (query, path, message) => {
    const problem = expectProblem(await search(query), 400, new RegExp(path.replace('.', '\\.')));
    expectViolation(problem, path, message);
  });

  it('several bad parameters are all listed', async () => {
    const problem = expectProblem(await search('colour=red&pageSize=500&direction=UP&sort=colour'), 400, /4 invalid parameter/);
    expect((problem.errors ?? []).map((error) => error.path).sort()).toEqual(['colour', 'direction', 'pageSize', 'sort']);
  });

  it('filters: type=GROUP and paging parameters → 400', async () => {
    const problem = expectProblem(await call(`${service.api}/resources/search/filters?type=GROUP`, { token: alice }), 400);
    expectViolation(problem, 'type', /DEVICE, SCENARIO/);
    expectViolation(expectProblem(await call(`${service.api}/resources/search/filters?pageSize=10`, { token: alice }), 400), 'pageSize');
    expectViolation(expectProblem(await call(`${service.api}/resources/search/filters?colour=red`, { token: alice }), 400), 'colour');
    // Control.
    expect((await as(alice).main.GET('/resources/search/filters', { params: { query: { type: 'DEVICE' } } })).response.status).toBe(200);
  });

  it('unknown route → 404 problem, wrong method → 405 problem, route of another address → 404 naming it', async () => {
    expectProblem(await call(`${service.api}/no/such/route`, { token: alice }), 404, /No route/);
    expectProblem(await call(`${service.api}/companies/acme/resources`, { token: alice }), 404, /No route/);
    // A route of another address: 404 naming it.
    expectProblem(await call(`${service.upload}/resources/search`, { token: alice }), 404, /served by the main address/);
    expectProblem(await call(`${service.auth}/nope`), 404, /No route/);
    expectProblem(await call(`${service.api}/resources/search`, { method: 'DELETE', token: alice }), 405, /DELETE/);
    expectProblem(await call(`${service.api}/companies/acme/resources/deployments`, { method: 'GET', token: alice }), 405, /GET/);
    expectProblem(
      await call(`${service.upload}/companies/acme/resources/scenarios/uploads/x`, { method: 'POST', token: alice, body: 'x' }),
      405,
      /POST/,
    );
    expectProblem(
      await call(`${service.upload}/companies/acme/resources/scenarios`, { method: 'GET', token: alice }),
      404,
      /served by the main address/,
    );
    expectProblem(await call(`${service.auth}/token`, { method: 'GET' }), 405, /GET/);
  });
});

describe('hostile inputs never reach the backends as 500s', () => {
  it('oversize and malformed identifiers in a deployment become per-item causes, with valid entries still carried out', async () => {
    const response = await postDeployments(alice, 'acme', [
      entry('acme-kiosk-0077', 'acme-welcome', 'x'.repeat(200)),
      entry('k'.repeat(200), 'acme-welcome', '1.0.0'),
      entry('acme-kiosk-0077', 'acme-welcome', '1.0.0'),
    ]);
    expect(response.response.status).toBe(200);
    expect(expectOk(response).items.map((item) => item.cause)).toEqual(['WHAT_NOT_FOUND', 'TARGET_NOT_FOUND', null]);
    const tooLong = await postDeployments(alice, 'acme', [entry('k'.repeat(300), 'a', '1.0.0')]);
    expect(tooLong.response.status).toBe(400);
    const undeployed = expectOk(await postDeployments(alice, 'acme', [entry('acme-kiosk-0077', 'acme-welcome', '1.0.0', 'UNDEPLOY')]));
    expect(undeployed.items[0]).toMatchObject({ state: 'SUCCESS', cause: null });
  });

  it('malformed percent-encoding in a path is 400, a junk upload id is 404', async () => {
    const encoded = await call(`${service.api}/companies/acme/resources/%ZZ/deployments`, { token: alice });
    expect(encoded.status).toBe(400);
    expect(encoded.headers.get('content-type')).toBe('application/problem+json');
    const junk = await as(alice).upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
      params: { path: { companyId: 'acme', uploadId: 'x'.repeat(2000) } },
    });
    expect(junk.response.status).toBe(404);
  });

  it('an object PUT again to a finished upload slot is not kept and does not change the outcome', async () => {
    const slot = expectOk(
      await as(alice).upload.POST('/companies/{companyId}/resources/scenarios/uploads', { params: { path: { companyId: 'acme' } } }),
    );
    const status = async () =>
      expectOk(
        await as(alice).upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
          params: { path: { companyId: 'acme', uploadId: slot.uploadId } },
        }),
      );
    // The presigned URL is S3's, outside the document: plain PUTs.
    await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: await validArchive('e2e-slot-reuse', '1.0.0') });
    await eventually(async () => (await status()).status !== 'PENDING', 'the first upload to be processed');
    expect((await status()).status).toBe('STORED');
    const junk = randomBytes(64 * 1024);
    await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: junk });
    await new Promise((done) => setTimeout(done, 1_500));
    expect(await status()).toMatchObject({ status: 'STORED', result: { id: 'e2e-slot-reuse', version: '1.0.0' } });
    const leftover = await fetch(slot.url.replace(/\?.*$/, ''));
    expect(leftover.status).toBe(404);
  });
});
