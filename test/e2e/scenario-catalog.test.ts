/**
 * End-to-end scenario catalogue over real HTTP against one local service (`bin/local.ts`): listing and paging the
 * company's scenarios, a scenario's versions with presigned downloads that really serve the archive, one version
 * (the Location of a 201 upload), the storage usage and how an upload moves it, and the 400/401/403/404 answers.
 */
import { createHash } from 'node:crypto';
import JSZip from 'jszip';
import { describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { answerOf, call, clientFor, type JsonResult, type TypedResult, uploadArchive, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob', 'olivia'] });

// ---------------------------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------------------------

type ScenarioPage = components['schemas']['ScenarioPage'];

interface Problem {
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
}

/** The typed client as the holder of `token` (none: no Authorization header); answers are checked against the document. */
const as = (token?: string) => clientFor(local.service, token);

/** Hand-built requests (`call`) here are the ones the typed client must not send: undocumented or invalid query parameters. */
const scenariosUrl = (company: string) => `${local.service.api}/companies/${company}/resources/scenarios`;

function expectProblem(result: JsonResult | TypedResult, status: number): Problem {
  const answer = answerOf(result);
  expect(answer.status, `unexpected status; body: ${JSON.stringify(answer.body)}`).toBe(status);
  expect(answer.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json\b/);
  expect(answer.body).toMatchObject({ status, type: expect.any(String), title: expect.any(String), detail: expect.any(String) });
  return answer.body as Problem;
}

const list = (token: string, companyId: string, query: { limit?: number; cursor?: string } = {}) =>
  as(token).main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId }, query } });

const scenario = (token: string, companyId: string, scenarioId: string) =>
  as(token).main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}', { params: { path: { companyId, scenarioId } } });

const scenarioVersion = (token: string, companyId: string, scenarioId: string, version: string) =>
  as(token).main.GET('/companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version}', {
    params: { path: { companyId, scenarioId, version } },
  });

const usageOf = (token: string, companyId: string) =>
  as(token).main.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId } } });

/** Every page of a company's scenario listing with `limit`, following nextCursor. */
async function listAllPages(token: string, company: string, limit: number): Promise<ScenarioPage[]> {
  const pages: ScenarioPage[] = [];
  let cursor: string | null = null;
  do {
    const page: ScenarioPage = expectOk(await list(token, company, cursor === null ? { limit } : { limit, cursor }));
    pages.push(page);
    cursor = page.nextCursor;
    expect(pages.length, 'too many pages').toBeLessThan(100);
  } while (cursor !== null);
  return pages;
}

async function detail(token: string, company: string, scenarioId: string) {
  return expectOk(await scenario(token, company, scenarioId));
}

/** Sum of the sizes of every stored version of every scenario of the company, read through the catalogue. */
async function storedBytes(token: string, company: string): Promise<number> {
  const scenarios = (await listAllPages(token, company, 1000)).flatMap((page) => page.items);
  const details = await Promise.all(scenarios.map((scenario) => detail(token, company, scenario.id)));
  return details.flatMap((scenario) => scenario.versions).reduce((total, version) => total + version.size, 0);
}

async function usage(token: string, company: string) {
  return expectOk(await usageOf(token, company));
}

/** A small valid scenario archive. */
async function validArchive(id: string, version: string): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file(
    'scenario.json',
    JSON.stringify({
      id,
      name: `Catalogue ${id}`,
      version,
      description: 'scenario catalogue e2e',
      thumbnails: ['resources/thumbnails/t.svg'],
      assets: ['resources/assets/index.html'],
    }),
  );
  zip.file('resources/thumbnails/t.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"/>');
  zip.file('resources/assets/index.html', `<!doctype html><h1>${id} ${version}</h1>`);
  return zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
}

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

// ---------------------------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------------------------

describe('listing scenarios', () => {
  it('shows the demo scenario acme-welcome with versions 1.0.0 and 1.1.0, and only acme scenarios', async () => {
    const page = expectOk(await list(local.tokens.alice, 'acme'));
    const welcome = page.items.find((scenario) => scenario.id === 'acme-welcome');
    expect(welcome).toEqual({
      id: 'acme-welcome',
      name: 'Acme welcome screen',
      description: 'Greets shoppers and shows the weekly offers.',
      latestVersion: '1.1.0',
      versions: ['1.0.0', '1.1.0'],
      created: expect.any(String),
      updated: expect.any(String),
    });
    expect(page.items.map((scenario) => scenario.id)).not.toContain('globex-timetable');
    expect(page.nextCursor).toBeNull();
  });

  it('pages with limit=1 and cursor: every scenario exactly once, ordered by id, no cursor on the last page', async () => {
    for (const id of ['catalog-paging-c', 'catalog-paging-a', 'catalog-paging-b']) {
      expect((await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive(id, '1.0.0'))).response.status).toBe(201);
    }
    const all = expectOk(await list(local.tokens.alice, 'acme', { limit: 1000 }));
    expect(all.items.length).toBeGreaterThanOrEqual(4);
    const pages = await listAllPages(local.tokens.alice, 'acme', 1);
    expect(pages).toHaveLength(all.items.length);
    for (const page of pages) expect(page.items).toHaveLength(1);
    expect(pages.at(-1)?.nextCursor).toBeNull();
    const ids = pages.flatMap((page) => page.items.map((scenario) => scenario.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(all.items.map((scenario) => scenario.id));
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining(['acme-welcome', 'catalog-paging-a', 'catalog-paging-b', 'catalog-paging-c']));

    // limit=2 covers the same scenarios
    const byTwo = (await listAllPages(local.tokens.alice, 'acme', 2)).flatMap((page) => page.items.map((scenario) => scenario.id));
    expect(byTwo).toEqual(ids);
  });

  it('answers 400 for a bad limit, unknown or repeated parameters, naming each', async () => {
    // Hand-built: values and parameters outside the document, which the typed client does not let through.
    for (const limit of ['0', '1001', 'abc', '-1', '1.5', '']) {
      const problem = expectProblem(await call(`${scenariosUrl('acme')}?limit=${limit}`, { token: local.tokens.alice }), 400);
      expect(problem.errors, limit).toEqual([{ path: 'limit', message: expect.stringMatching(/1 to 1000/) }]);
    }
    const problem = expectProblem(await call(`${scenariosUrl('acme')}?limit=1&limit=2&colour=red`, { token: local.tokens.alice }), 400);
    expect(problem.errors?.map((error) => error.path).sort()).toEqual(['colour', 'limit']);
    expect(problem.errors?.find((error) => error.path === 'colour')?.message).toMatch(/Allowed: limit, cursor/);
  });

  it('answers 400 for a tampered cursor: garbage, another company, another item kind', async () => {
    const first = expectOk(await list(local.tokens.alice, 'acme', { limit: 1 }));
    expect(first.nextCursor).toEqual(expect.any(String));
    const [payload, signature] = (first.nextCursor as string).split('.') as [string, string];
    const key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    // Another key under the signature the service issued.
    const forge = (value: unknown) => `${Buffer.from(JSON.stringify(value)).toString('base64url')}.${signature}`;
    const tampered = [
      'not-a-cursor',
      `${first.nextCursor as string}x`,
      payload,
      forge({ ...key, company: 'globex' }),
      forge({ ...key, sk: 'VERSION#acme-welcome#1.0.0' }),
      forge({ ...key, sk: 'UPLOAD#01' }),
      forge({ ...key, extra: 1 }),
      forge([key]),
    ];
    for (const cursor of tampered) {
      const problem = expectProblem(await list(local.tokens.alice, 'acme', { limit: 1, cursor }), 400);
      expect(problem.errors, cursor).toEqual([{ path: 'cursor', message: expect.any(String) }]);
    }
    // the genuine cursor still works
    expectOk(await list(local.tokens.alice, 'acme', { limit: 1, cursor: first.nextCursor as string }));
  });
});

describe('a scenario and its versions', () => {
  it('lists every version with size, sha256, uploader and a 5-minute download URL', async () => {
    const before = Date.now();
    const scenario = await detail(local.tokens.alice, 'acme', 'acme-welcome');
    expect(scenario).toMatchObject({ id: 'acme-welcome', name: 'Acme welcome screen', latestVersion: '1.1.0' });
    expect(scenario.versions.map((version) => version.version)).toEqual(['1.0.0', '1.1.0']);
    for (const version of scenario.versions) {
      expect(version).toEqual({
        version: version.version,
        size: expect.any(Number),
        sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        uploadedBy: 'demo-seed',
        created: expect.any(String),
        download: { url: expect.stringMatching(/^https?:\/\//), expiresAt: expect.any(String) },
      });
      expect(version.size).toBeGreaterThan(0);
      const expiresIn = Date.parse(version.download.expiresAt) - before;
      expect(expiresIn).toBeGreaterThan(290_000);
      expect(expiresIn).toBeLessThan(310_000);
    }
  });

  it('serves the archive at the download URL without a token: its sha256 is the listed one and it unzips to that version', async () => {
    const scenario = await detail(local.tokens.alice, 'acme', 'acme-welcome');
    for (const version of scenario.versions) {
      const response = await fetch(version.download.url);
      expect(response.status, version.version).toBe(200);
      expect(response.headers.get('content-disposition') ?? '').toContain(`acme-welcome-${version.version}.zip`);
      const bytes = new Uint8Array(await response.arrayBuffer());
      expect(bytes.byteLength).toBe(version.size);
      expect(sha256(bytes)).toBe(version.sha256);
      const manifest = JSON.parse(await ((await JSZip.loadAsync(bytes)).file('scenario.json')?.async('string') ?? 'null')) as {
        id: string;
        version: string;
      };
      expect(manifest).toMatchObject({ id: 'acme-welcome', version: version.version });
    }
  });

  it('answers one version at the Location of a 201 upload, with the 201 body figures', async () => {
    const archive = await validArchive('catalog-location', '3.2.1');
    const uploaded = await uploadArchive(local.service, local.tokens.alice, 'acme', archive);
    expect(uploaded.response.status).toBe(201);
    const stored = expectOk(uploaded);
    const location = uploaded.response.headers.get('location') as string;
    expect(location).toBe('/companies/acme/resources/scenarios/catalog-location/versions/3.2.1');
    // The typed call below sends exactly that path (ScenarioVersionGet).
    const version = expectOk(await scenarioVersion(local.tokens.alice, 'acme', 'catalog-location', '3.2.1'));
    expect(version).toMatchObject({
      version: '3.2.1',
      size: archive.byteLength,
      sha256: sha256(archive),
      uploadedBy: 'alice',
      created: stored.created,
    });
    expect(stored).toMatchObject({ size: version.size, sha256: version.sha256 });
    const downloaded = new Uint8Array(await (await fetch(version.download.url)).arrayBuffer());
    expect(sha256(downloaded)).toBe(sha256(archive));

    // a lower version uploaded later: versions stay in upload order, latestVersion is the highest
    expect(
      (await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive('catalog-location', '3.10.0-rc.1'))).response
        .status,
    ).toBe(201);
    expect(
      (await uploadArchive(local.service, local.tokens.alice, 'acme', await validArchive('catalog-location', '3.1.0'))).response.status,
    ).toBe(201);
    const scenario = await detail(local.tokens.alice, 'acme', 'catalog-location');
    expect(scenario).toMatchObject({
      id: 'catalog-location',
      name: 'Catalogue catalog-location',
      description: 'scenario catalogue e2e',
      latestVersion: '3.10.0-rc.1',
    });
    expect(scenario.versions.map((entry) => entry.version)).toEqual(['3.2.1', '3.10.0-rc.1', '3.1.0']);
    const listed = (await listAllPages(local.tokens.alice, 'acme', 1000))
      .flatMap((page) => page.items)
      .find((entry) => entry.id === 'catalog-location');
    expect(listed).toMatchObject({ latestVersion: '3.10.0-rc.1', versions: ['3.2.1', '3.10.0-rc.1', '3.1.0'] });
  });

  it("answers 404 for an unknown scenario, an unknown version, and another company's scenario", async () => {
    expectProblem(await scenario(local.tokens.alice, 'acme', 'no-such-scenario'), 404);
    expectProblem(await scenarioVersion(local.tokens.alice, 'acme', 'acme-welcome', '9.9.9'), 404);
    expectProblem(await scenarioVersion(local.tokens.alice, 'acme', 'acme-welcome', 'not-a-version'), 404);
    expectProblem(await scenarioVersion(local.tokens.alice, 'acme', 'no-such-scenario', '1.0.0'), 404);
    // globex-timetable exists, but in globex: not visible from acme
    expectProblem(await scenario(local.tokens.olivia, 'acme', 'globex-timetable'), 404);
    expectProblem(await scenarioVersion(local.tokens.olivia, 'acme', 'globex-timetable', '1.0.0'), 404);
    // an id that cannot exist (a key separator, sent as %23) is simply not found
    const separator = await scenario(local.tokens.alice, 'acme', 'acme-welcome#1.0.0');
    expect(new URL(separator.response.url).pathname).toBe('/companies/acme/resources/scenarios/acme-welcome%231.0.0');
    expectProblem(separator, 404);
  });

  it('answers 400 for query parameters on the detail, version and usage addresses', async () => {
    // Hand-built: these addresses document no query parameter.
    for (const path of ['/acme-welcome', '/acme-welcome/versions/1.0.0', '/usage']) {
      const problem = expectProblem(await call(`${scenariosUrl('acme')}${path}?limit=1`, { token: local.tokens.alice }), 400);
      expect(problem.errors, path).toEqual([{ path: 'limit', message: expect.stringMatching(/Unknown parameter/) }]);
    }
  });
});

describe('storage usage', () => {
  it('equals the sum of the sizes of every stored version of the company', async () => {
    const account = await usage(local.tokens.bob, 'globex');
    expect(account.quotaBytes).toBe(5_242_880);
    expect(account.usedBytes).toBe(await storedBytes(local.tokens.bob, 'globex'));
    expect(account.usedBytes).toBeGreaterThan(0);
    expect(account.availableBytes).toBe(account.quotaBytes - account.usedBytes);
  });

  it('grows by exactly the size of a newly stored version, and not on a refused one', async () => {
    const before = await usage(local.tokens.bob, 'globex');
    const archive = await validArchive('globex-timetable', '2.0.0');
    const stored = await uploadArchive(local.service, local.tokens.bob, 'globex', archive);
    expect(stored.response.status).toBe(201);
    expect(expectOk(stored).size).toBe(archive.byteLength);
    const after = await usage(local.tokens.bob, 'globex');
    expect(after.usedBytes - before.usedBytes).toBe(archive.byteLength);
    expect(after.usedBytes).toBe(await storedBytes(local.tokens.bob, 'globex'));

    // the same version again: 409, nothing counted
    expect((await uploadArchive(local.service, local.tokens.bob, 'globex', archive)).response.status).toBe(409);
    expect((await usage(local.tokens.bob, 'globex')).usedBytes).toBe(after.usedBytes);

    const timetable = await detail(local.tokens.bob, 'globex', 'globex-timetable');
    expect(timetable.latestVersion).toBe('2.0.0');
    expect(timetable.versions.map((version) => [version.version, version.uploadedBy])).toEqual([
      ['1.0.0', 'demo-seed'],
      ['1.1.0', 'demo-seed'],
      ['2.0.0', 'bob'],
    ]);
  });
});

describe('authentication and authorization', () => {
  const paths = ['', '?limit=1', '/acme-welcome', '/acme-welcome/versions/1.0.0', '/usage'];

  it('answers 403 to bob on every acme catalogue address', async () => {
    const answers = [
      await list(local.tokens.bob, 'acme'),
      await list(local.tokens.bob, 'acme', { limit: 1 }),
      await scenario(local.tokens.bob, 'acme', 'acme-welcome'),
      await scenarioVersion(local.tokens.bob, 'acme', 'acme-welcome', '1.0.0'),
      await usageOf(local.tokens.bob, 'acme'),
    ];
    for (const answer of answers) expectProblem(answer, 403);
  });

  it('answers 403 before looking at parameters or existence', async () => {
    // Hand-built: invalid and undocumented parameters.
    expectProblem(await call(`${scenariosUrl('acme')}?limit=0&colour=red`, { token: local.tokens.bob }), 403);
    expectProblem(await call(`${scenariosUrl('acme')}/no-such-scenario?x=1`, { token: local.tokens.bob }), 403);
    expectProblem(await usageOf(local.tokens.alice, 'no-such-company'), 403);
  });

  it('answers 401 without a token', async () => {
    // Hand-built: no Authorization header at all.
    for (const path of paths) {
      const result = await call(`${scenariosUrl('acme')}${path}`);
      expectProblem(result, 401);
      expect(result.headers.get('www-authenticate') ?? '').toMatch(/^Bearer\b/);
    }
  });

  it('lets olivia (scenarios:read on acme and globex) read both companies', async () => {
    expect((await usage(local.tokens.olivia, 'acme')).quotaBytes).toBe(1_073_741_824);
    expect((await detail(local.tokens.olivia, 'globex', 'globex-timetable')).id).toBe('globex-timetable');
  });
});
