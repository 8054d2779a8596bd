/**
 * Search index maintenance over real HTTP against the local runtime (`bin/local.ts`):
 * - `npm run reindex` (bin/reindex.ts) rebuilds the embedded index of a running `npm start` and swaps it in;
 * - with SEARCH_ENGINE=opensearch and an OpenSearch that does not answer, search and filters answer 503
 *   problem+json with Retry-After while deployments and uploads keep working; once OpenSearch is back (an in-memory
 *   fake here: no real OpenSearch is needed), the stream consumer's retries deliver the writes it missed, and
 *   `npm run reindex` rebuilds the index through a new concrete index and an alias switch.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { freePort } from '../../functions/local/free-port.js';
import { FakeOpenSearch } from '../unit/search/fake-opensearch.js';
import {
  answerOf,
  clientFor,
  eventually,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
  uploadArchive,
  useLocalService,
} from './harness.js';

const root = resolve(import.meta.dirname, '../..');
const SEARCH_VARIABLES = ['SEARCH_ENGINE', 'OPENSEARCH_URL', 'OPENSEARCH_INDEX', 'OPENSEARCH_AUTH'];

/** Runs `npm run reindex` (bin/reindex.ts) against the data folder; resolves with its exit code and output. */
function runReindex(dataDirectory: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDirectory, NODE_NO_WARNINGS: '1' };
  for (const name of SEARCH_VARIABLES) delete env[name];
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(root, 'bin/reindex.ts')], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((done) => child.once('exit', (code) => done({ code, stdout, stderr })));
}

/** The disconnected devices, by serial, 100 a page: the search both suites run. */
const search = (service: LocalService, token: string) =>
  clientFor(service, token).main.GET('/resources/search', {
    params: { query: { type: ['DEVICE'], 'connection.state': ['DISCONNECTED'], sort: 'serial', pageSize: 100 } },
  });

const filters = (service: LocalService, token: string) =>
  clientFor(service, token).main.GET('/resources/search/filters', { params: { query: { type: 'DEVICE' } } });

describe('npm run reindex on the embedded engine', () => {
  const local = useLocalService({ users: ['olivia'] });

  it('rebuilds the index of the running service and swaps it in; searches answer the same', async () => {
    const before = expectOk(await search(local.service, local.tokens.olivia));
    const reindex = await runReindex(local.settings.dataDirectory);
    expect(reindex.stderr).toBe('');
    expect(reindex.code).toBe(0);
    expect(JSON.parse(reindex.stdout)).toEqual({ index: 'embedded-3', documents: 242, tookMs: expect.any(Number) });
    const after = expectOk(await search(local.service, local.tokens.olivia));
    expect(after).toEqual(before);
    expect(local.service.output()).toContain('Search index rebuilt: 242 documents');
  });
});

describe('OpenSearch unreachable, then back', () => {
  let settings: ServiceSettings;
  let service: LocalService;
  let alice: string;
  let port: number;
  const fake = new FakeOpenSearch();

  beforeAll(async () => {
    port = await freePort();
    Object.assign(process.env, { SEARCH_ENGINE: 'opensearch', OPENSEARCH_URL: `http://127.0.0.1:${port}`, OPENSEARCH_INDEX: 'resources' });
    settings = await newServiceSettings();
    try {
      service = await startService(settings);
    } finally {
      for (const name of SEARCH_VARIABLES) delete process.env[name];
    }
    alice = await tokenFor(service, 'alice');
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
    await fake.close();
    if (settings !== undefined) await removeDataDirectory(settings);
  }, 120_000);

  it('starts anyway and says so', () => {
    expect(service.output()).toContain('Search index not rebuilt');
    expect(service.output()).toContain('0 documents indexed');
  });

  it('answers 503 problem+json with Retry-After on search and filters', async () => {
    for (const [path, typed] of [
      ['search', await search(service, alice)],
      ['filters', await filters(service, alice)],
    ] as const) {
      const result = answerOf(typed);
      expect(result.status, path).toBe(503);
      expect(result.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(Number(result.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(result.body).toMatchObject({ status: 503, title: 'Service Unavailable', detail: expect.stringContaining('search backend') });
    }
  });

  let uploadedId: string;

  it('keeps deployments and uploads working', async () => {
    const dss = clientFor(service, alice);
    const deployed = await dss.main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: 'acme' } },
      body: {
        requests: [
          {
            target: { type: 'DEVICE', id: 'acme-kiosk-0007', subId: null },
            what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
            action: 'DEPLOY',
          },
        ],
      },
    });
    expect(deployed.response.status).toBe(200);
    expect(expectOk(deployed).items[0]).toMatchObject({ state: 'SUCCESS', cause: null });

    const skeleton = await dss.main.GET('/companies/{companyId}/resources/scenarios/skeleton.zip', {
      params: { path: { companyId: 'acme' }, query: { version: '1.0.0' } },
      headers: { accept: 'application/zip' },
      parseAs: 'arrayBuffer',
    });
    expect(skeleton.response.status).toBe(200);
    const uploaded = await uploadArchive(service, alice, 'acme', new Uint8Array(expectOk(skeleton)));
    expect(uploaded.response.status).toBe(201);
    uploadedId = expectOk(uploaded).id;
  });

  it('delivers the missed write once OpenSearch is back (stream retries), and npm run reindex switches the alias', async () => {
    // OpenSearch comes back with the index it had before it went away.
    fake.seedIndex('resources-before', 'resources');
    await fake.listen(port);
    await eventually(
      async () => fake.documentsOf('resources').has(`SCENARIO#acme#${uploadedId}`),
      'the uploaded scenario to reach OpenSearch',
    );

    const reindex = await runReindex(settings.dataDirectory);
    expect(reindex.stderr).toBe('');
    const result = JSON.parse(reindex.stdout) as { index: string; documents: number };
    expect(result).toMatchObject({ index: expect.stringMatching(/^resources-\d{8}t\d{9}z$/), documents: 243 });
    expect(fake.aliasTable()).toEqual({ resources: [result.index] });
    expect(fake.indexes.has('resources-before')).toBe(false);
    expect(fake.documentsOf('resources').size).toBe(243);
    expect((await search(service, alice)).response.status).toBe(200);
  });
});
