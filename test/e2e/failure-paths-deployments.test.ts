/**
 * End-to-end failure paths of deployments over real HTTP against one local service (`bin/local.ts`): request
 * validation (400) and per-item causes, concurrency on the embedded DynamoDB, active deployment listing (cursor
 * pagination, 400/404), and hostile inputs that must never reach the backends as 500s.
 *
 * Requests the typed client can express go through it (clientFor); the others are hand-built with `call` on purpose:
 * missing, forged or foreign-scheme tokens, bodies that are not JSON or not of the documented shape, parameters the
 * document does not have or values of the wrong type, routes sent to the wrong address or with the wrong method.
 * Every error must be an RFC 9457 problem (docs/contract.md, "Errors").
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import {
  type DeploymentEntry,
  deploymentHelpers,
  entry,
  expectProblem,
  expectViolation,
  keysOf,
  type ResultItem,
  ULID,
  validArchive,
} from './failure-paths.js';
import { call, eventually, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob'] });

const {
  as,
  activeByCompany,
  postDeployments,
  listDeployments,
  listDeviceDeployments,
  deploy,
  listAllPages,
  deviceDeployments,
  companyDeployments,
} = deploymentHelpers(() => local.service);

// ---------------------------------------------------------------------------------------------------------------
// Deployment request validation (400) and per-item causes
// ---------------------------------------------------------------------------------------------------------------

describe('deployments: 400 for structurally invalid bodies (nothing changed), FAILURE causes per item', () => {
  const DEVICE = 'acme-kiosk-0010';
  const valid = entry(DEVICE, 'acme-welcome', '1.0.0');
  const url = () => `${local.service.api}/companies/acme/resources/deployments`;

  it('each invalid body is a 400 problem and changes nothing', async () => {
    // Hand-built: none of these bodies is of the documented shape, which the typed client would refuse to send.
    const deviceBefore = await deviceDeployments(local.tokens.alice, 'acme', DEVICE);
    const companyBefore = await companyDeployments(local.tokens.alice, 'acme');

    expectProblem(
      await call(url(), { token: local.tokens.alice, body: '{"requests": [', headers: { 'content-type': 'application/json' } }),
      400,
      /not valid JSON/,
    );
    expectProblem(
      await call(url(), {
        token: local.tokens.alice,
        body: JSON.stringify({ requests: [valid] }),
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      /application\/json.*text\/plain/,
    );
    expectProblem(await call(url(), { token: local.tokens.alice, body: JSON.stringify({ requests: [valid] }) }), 400, /application\/json/);

    const invalid = /invalid; nothing was changed/;
    expectViolation(
      expectProblem(await call(url(), { token: local.tokens.alice, json: { note: 'no requests' } }), 400, invalid),
      '/requests',
    );
    expectViolation(expectProblem(await call(url(), { token: local.tokens.alice, json: { requests: [] } }), 400, invalid), '/requests');
    expectViolation(expectProblem(await call(url(), { token: local.tokens.alice, json: [valid] }), 400, invalid), '/');
    expectViolation(
      expectProblem(
        await call(url(), { token: local.tokens.alice, json: { requests: [valid, { ...valid, action: 'REDEPLOY' }] } }),
        400,
        invalid,
      ),
      '/requests/1/action',
      /DEPLOY/,
    );
    expectViolation(
      expectProblem(
        await call(url(), {
          token: local.tokens.alice,
          json: { requests: [valid, { ...valid, what: { type: 'SCENARIO', id: 'acme-welcome' } }] },
        }),
        400,
        invalid,
      ),
      '/requests/1/what/subId',
    );
    // Several violations at once are all listed.
    const many = expectProblem(
      await call(url(), {
        token: local.tokens.alice,
        json: {
          requests: [valid, { target: { type: 'DEVICE' }, what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.0.0' }, action: 'PUSH' }],
        },
      }),
      400,
      invalid,
    );
    expectViolation(many, '/requests/1/target/id');
    expectViolation(many, '/requests/1/action');

    expect(await deviceDeployments(local.tokens.alice, 'acme', DEVICE)).toEqual(deviceBefore);
    expect(await companyDeployments(local.tokens.alice, 'acme')).toEqual(companyBefore);
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
        await call(url(), { token: local.tokens.alice, body: utf16, headers: { 'content-type': contentType } }),
        415,
        /read as UTF-8 only/,
      );
      expect(refused.title).toBe('Unsupported Media Type');
    }
    expect(await deviceDeployments(local.tokens.alice, 'acme', DEVICE)).toEqual([]);
    const devicePut = await call(`${local.service.api}/companies/acme/resources/devices/${DEVICE}`, {
      method: 'PUT',
      token: local.tokens.alice,
      body: new Uint8Array(Buffer.from(JSON.stringify({ serial: 'SN-UTF16' }), 'utf16le')),
      headers: { 'content-type': 'application/json; charset=utf-16le' },
    });
    expectProblem(devicePut, 415, /UTF-8/);

    const accepted = await call(url(), {
      token: local.tokens.alice,
      body: text,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    });
    expect(accepted.status).toBe(200);
    expect(await deviceDeployments(local.tokens.alice, 'acme', DEVICE)).toHaveLength(1);
    await deploy(local.tokens.alice, 'acme', [{ ...valid, action: 'UNDEPLOY' }]);
  });

  it('one mixed request reports every cause, in request order, each item with a fresh id', async () => {
    await deploy(local.tokens.alice, 'acme', [entry('acme-kiosk-0021', 'acme-welcome', '1.1.0')]);
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
    const items = await deploy(local.tokens.alice, 'acme', requests, 'e2e mixed request');
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
    expect(await deviceDeployments(local.tokens.bob, 'globex', 'globex-kiosk-0001')).toEqual([]);
    expect(keysOf(await deviceDeployments(local.tokens.alice, 'acme', 'acme-kiosk-0020'))).toEqual(['acme-kiosk-0020#acme-welcome#1.0.0']);
    expect(await deviceDeployments(local.tokens.alice, 'acme', 'acme-kiosk-0021')).toEqual([]);
    const listed = (await deviceDeployments(local.tokens.alice, 'acme', 'acme-kiosk-0020'))[0];
    expect(listed).toMatchObject({ id: items[0]?.id, deployedBy: 'alice', note: 'e2e mixed request', state: 'SUCCESS', cause: null });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Concurrency on the embedded DynamoDB
// ---------------------------------------------------------------------------------------------------------------

describe('concurrency: identical requests racing on DynamoDB Local', () => {
  const DEVICE = 'acme-kiosk-0050';
  const race = (action: 'DEPLOY' | 'UNDEPLOY') =>
    Promise.all(Array.from({ length: 20 }, () => deploy(local.tokens.alice, 'acme', [entry(DEVICE, 'acme-welcome', '1.0.0', action)])));

  function tally(results: ResultItem[][]): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const [item] of results) {
      const key = item === undefined ? 'missing' : item.state === 'SUCCESS' ? 'SUCCESS' : String(item.cause);
      counts[key] = (counts[key] ?? 0) + 1;
    }
    return counts;
  }

  it('20 concurrent DEPLOYs: exactly one SUCCESS, 19 ALREADY_DEPLOYED; then 20 UNDEPLOYs: one SUCCESS, 19 ALREADY_UNDEPLOYED', async () => {
    expect(await deviceDeployments(local.tokens.alice, 'acme', DEVICE)).toEqual([]);
    expect(tally(await race('DEPLOY'))).toEqual({ SUCCESS: 1, ALREADY_DEPLOYED: 19 });
    expect(keysOf(await deviceDeployments(local.tokens.alice, 'acme', DEVICE))).toEqual([`${DEVICE}#acme-welcome#1.0.0`]);

    expect(tally(await race('UNDEPLOY'))).toEqual({ SUCCESS: 1, ALREADY_UNDEPLOYED: 19 });
    expect(await deviceDeployments(local.tokens.alice, 'acme', DEVICE)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Active deployment listing
// ---------------------------------------------------------------------------------------------------------------

describe('listing active deployments: cursor pagination and 400/404', () => {
  const DEVICES = ['acme-kiosk-0101', 'acme-kiosk-0102', 'acme-kiosk-0103', 'acme-kiosk-0104', 'acme-kiosk-0105'];

  it('limit=2 pages through exactly the active set, without duplicates, ending with nextCursor null', async () => {
    const items = await deploy(
      local.tokens.alice,
      'acme',
      DEVICES.map((device) => entry(device, 'acme-welcome', '1.0.0')),
      'listing',
    );
    expect(items.every((item) => item.state === 'SUCCESS')).toBe(true);

    const pages = await listAllPages(local.tokens.alice, 'acme', 2);
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
    const globex = await companyDeployments(local.tokens.bob, 'globex');
    expect(globex.filter((item) => item.target.id.startsWith('acme-'))).toEqual([]);
  });

  it('limit=0, limit=1001, a non-numeric limit and an unknown parameter → 400', async () => {
    expectViolation(expectProblem(await listDeployments(local.tokens.alice, 'acme', { limit: 0 }), 400), 'limit', /1 to 1000/);
    expectViolation(expectProblem(await listDeployments(local.tokens.alice, 'acme', { limit: 1001 }), 400), 'limit', /1 to 1000/);
    // Hand-built: a limit that is not a number, and parameters the listings do not have.
    const base = `${local.service.api}/companies/acme/resources/DEVICE/deployments`;
    expectViolation(expectProblem(await call(`${base}?limit=ten`, { token: local.tokens.alice }), 400), 'limit');
    expectViolation(expectProblem(await call(`${base}?colour=blue`, { token: local.tokens.alice }), 400), 'colour', /limit, cursor/);
    expectViolation(
      expectProblem(
        await call(`${local.service.api}/companies/acme/resources/acme-kiosk-0101/deployments?sort=id`, { token: local.tokens.alice }),
        400,
      ),
      'sort',
    );
  });

  it('a tampered or foreign cursor → 400', async () => {
    const cursor = expectOk(await listDeployments(local.tokens.alice, 'acme', { limit: 1 })).nextCursor as string;
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
      const problem = expectProblem(await listDeployments(local.tokens.alice, 'acme', { cursor: value }), 400, /cursor/);
      expectViolation(problem, 'cursor');
    }
    // A company-wide cursor is valid for no device's listing, not even that of the device its page ended on.
    const lastDevice = (decoded.sk as string).split('#')[0] as string;
    for (const device of ['acme-kiosk-0102', lastDevice]) {
      expectProblem(await listDeviceDeployments(local.tokens.alice, 'acme', device, { cursor }), 400, /cursor/);
    }
  });

  it("an unknown device, or another company's device, → 404 problem", async () => {
    expectProblem(await listDeviceDeployments(local.tokens.alice, 'acme', 'acme-kiosk-9999'), 404, /acme-kiosk-9999/);
    const foreign = expectProblem(await listDeviceDeployments(local.tokens.alice, 'acme', 'globex-kiosk-0001'), 404);
    expect(foreign.detail).not.toMatch(/globex'/);
  });
});

describe('hostile inputs never reach the backends as 500s', () => {
  it('oversize and malformed identifiers in a deployment become per-item causes, with valid entries still carried out', async () => {
    const response = await postDeployments(local.tokens.alice, 'acme', [
      entry('acme-kiosk-0077', 'acme-welcome', 'x'.repeat(200)),
      entry('k'.repeat(200), 'acme-welcome', '1.0.0'),
      entry('acme-kiosk-0077', 'acme-welcome', '1.0.0'),
    ]);
    expect(response.response.status).toBe(200);
    expect(expectOk(response).items.map((item) => item.cause)).toEqual(['WHAT_NOT_FOUND', 'TARGET_NOT_FOUND', null]);
    const tooLong = await postDeployments(local.tokens.alice, 'acme', [entry('k'.repeat(300), 'a', '1.0.0')]);
    expect(tooLong.response.status).toBe(400);
    const undeployed = expectOk(
      await postDeployments(local.tokens.alice, 'acme', [entry('acme-kiosk-0077', 'acme-welcome', '1.0.0', 'UNDEPLOY')]),
    );
    expect(undeployed.items[0]).toMatchObject({ state: 'SUCCESS', cause: null });
  });

  it('malformed percent-encoding in a path is 400, a junk upload id is 404', async () => {
    const encoded = await call(`${local.service.api}/companies/acme/resources/%ZZ/deployments`, { token: local.tokens.alice });
    expect(encoded.status).toBe(400);
    expect(encoded.headers.get('content-type')).toBe('application/problem+json');
    const junk = await as(local.tokens.alice).upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
      params: { path: { companyId: 'acme', uploadId: 'x'.repeat(2000) } },
    });
    expect(junk.response.status).toBe(404);
  });

  it('an object PUT again to a finished upload slot is not kept and does not change the outcome', async () => {
    const slot = expectOk(
      await as(local.tokens.alice).upload.POST('/companies/{companyId}/resources/scenarios/uploads', {
        params: { path: { companyId: 'acme' } },
      }),
    );
    const status = async () =>
      expectOk(
        await as(local.tokens.alice).upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
          params: { path: { companyId: 'acme', uploadId: slot.uploadId } },
        }),
      );
    // The presigned URL is S3's, outside the document: plain PUTs.
    await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: await validArchive('e2e-slot-reuse', '1.0.0') });
    await eventually(async () => (await status()).status !== 'PENDING', 'the first upload to be processed');
    expect((await status()).status).toBe('STORED');
    const junk = randomBytes(64 * 1024);
    await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: junk });
    // The object is deleted once the service has handled its arrival.
    const leftover = async () => (await fetch(slot.url.replace(/\?.*$/, ''))).status;
    await eventually(async () => (await leftover()) === 404, 'the second object to be deleted');
    expect(await status()).toMatchObject({ status: 'STORED', result: { id: 'e2e-slot-reuse', version: '1.0.0' } });
  });
});
