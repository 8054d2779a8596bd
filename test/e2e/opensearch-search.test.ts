/**
 * The local runtime on a real OpenSearch (the `e2e-opensearch` project: SEARCH_ENGINE=opensearch, the project's node,
 * an index of this service's own): the start-up rebuild fills it, a device registered through the API reaches it
 * through the stream indexer (DynamoDB Local's stream, the search-indexer handler, a bulk request) and is found by
 * search, the commands the kiosks advertise are a facet, and `npm run reindex` builds a new concrete index, switches
 * the alias to it and removes the old one, while searches answer as before.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const root = resolve(import.meta.dirname, '../..');
const node = inject('opensearchUrl');

/** Reads a JSON answer of the node. @throws Error on a status other than 2xx */
async function nodeJson<T>(path: string): Promise<T> {
  const response = await fetch(`${node}${path}`);
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Runs `npm run reindex` (bin/reindex.ts) against the running service of a data folder. */
function runReindex(dataDirectory: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDirectory, NODE_NO_WARNINGS: '1' };
  // Through the running service (its admin listener), as a user without the search settings would run it.
  for (const name of ['SEARCH_ENGINE', 'OPENSEARCH_URL', 'OPENSEARCH_INDEX']) delete env[name];
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

describe('the local runtime on OpenSearch', () => {
  const local = useLocalService({ users: ['alice'] });
  const alias = () => `e2e-${local.settings.ports.api}`;
  const searchSerial = async (serial: string) =>
    expectOk(await clientFor(local.service, local.tokens.alice).main.GET('/resources/search', { params: { query: { global: serial } } }));

  it('fills its own index on the node at start, behind the alias', async () => {
    const aliases = await nodeJson<Record<string, unknown>>(`/_alias/${alias()}`);
    expect(Object.keys(aliases)).toEqual([expect.stringMatching(new RegExp(`^${alias()}-\\d{8}t\\d{9}z$`))]);
    expect(await nodeJson(`/${alias()}/_count`)).toMatchObject({ count: 242 });
  });

  it('indexes a device registered through the API (stream indexer, bulk request) and finds it', async () => {
    const registered = await clientFor(local.service, local.tokens.alice).main.POST('/companies/{companyId}/resources/devices', {
      params: { path: { companyId: 'acme' } },
      body: [{ id: 'opensearch-kiosk-1', serial: 'OSN-000001', location: { name: 'Réception Zürich' } }],
    });
    expect(expectOk(registered)).toEqual([expect.objectContaining({ id: 'opensearch-kiosk-1', state: 'CREATED' })]);
    await eventually(async () => (await searchSerial('OSN-000001')).total === 1, 'the new device to be found on OpenSearch');
    const found = await searchSerial('zurich');
    expect(found.resources.map((resource) => resource.id)).toContain('opensearch-kiosk-1');
  });

  it('lists the commands the kiosks advertise with their counts, and finds the kiosks that advertise one', async () => {
    const field = 'health.hubs.devices.commands.command';
    const main = clientFor(local.service, local.tokens.alice).main;
    const filters = expectOk(await main.GET('/resources/search/filters', { params: { query: { type: 'DEVICE' } } }));
    const commands = filters.items.find((item) => item.field === field);
    expect(commands).toMatchObject({ name: 'Advertised command', scope: 'DEVICE' });
    const printing = commands?.definition.parameters.find((parameter) => parameter.value === 'print-test-page');
    expect(printing?.count).toBeGreaterThan(0);
    const found = expectOk(await main.GET('/resources/search', { params: { query: { [field]: ['print-test-page'], pageSize: 100 } } }));
    expect(found.total).toBe(printing?.count);
    for (const device of found.resources) {
      const advertised =
        device.type === 'DEVICE' ? (device.health?.hubs ?? []).flatMap((hub) => hub.devices.flatMap((sub) => sub.commands)) : [];
      expect(advertised.map((command) => command.command)).toContain('print-test-page');
    }
  });

  it('npm run reindex builds a new index, switches the alias and removes the old one; searches answer as before', async () => {
    const [before] = Object.keys(await nodeJson<Record<string, unknown>>(`/_alias/${alias()}`));
    const query = { type: ['DEVICE' as const], 'connection.state': ['DISCONNECTED' as const], sort: 'serial' as const, pageSize: 100 };
    const search = async () =>
      expectOk(await clientFor(local.service, local.tokens.alice).main.GET('/resources/search', { params: { query } }));
    const answerBefore = await search();

    const reindex = await runReindex(local.settings.dataDirectory);
    expect(reindex.stderr).toBe('');
    expect(reindex.code).toBe(0);
    const result = JSON.parse(reindex.stdout) as { index: string; documents: number };
    expect(result).toMatchObject({ index: expect.stringMatching(new RegExp(`^${alias()}-\\d{8}t\\d{9}z$`)), documents: 243 });
    expect(result.index).not.toBe(before);
    expect(Object.keys(await nodeJson<Record<string, unknown>>(`/_alias/${alias()}`))).toEqual([result.index]);
    expect((await fetch(`${node}/${before}`, { method: 'HEAD' })).status).toBe(404);
    expect(await search()).toEqual(answerBefore);
  });
});
