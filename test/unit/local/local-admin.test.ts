/**
 * How `npm run reindex` reaches a running `npm start`: the loopback admin listener and its client, found through
 * `<data folder>/runtime.json`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ReindexResult } from '../../../functions/core/search/reindex.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import { createAdminServer, RUNTIME_FILE, requestLocalReindex } from '../../../functions/local/admin.js';
import { freePort } from '../../../functions/local/free-port.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Starts an admin listener over `reindex` and writes its runtime.json into a fresh data folder. */
async function runtimeWith(reindex: () => Promise<ReindexResult>): Promise<{ dataDirectory: string; admin: string; log: string[] }> {
  const log: string[] = [];
  const server: Server = createAdminServer(reindex, (line) => log.push(line));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', () => done()));
  const admin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const dataDirectory = await mkdtemp(join(tmpdir(), 'dss-admin-'));
  await writeFile(join(dataDirectory, RUNTIME_FILE), JSON.stringify({ pid: process.pid, admin }));
  cleanups.push(async () => {
    await new Promise<void>((done) => server.close(() => done()));
    await rm(dataDirectory, { recursive: true, force: true });
  });
  return { dataDirectory, admin, log };
}

describe('local reindex (admin listener and client)', () => {
  it('runs the reindex and returns its result; the runtime logs it', async () => {
    const { dataDirectory, log } = await runtimeWith(async () => ({ index: 'embedded-2', documents: 242, tookMs: 35 }));
    expect(await requestLocalReindex(dataDirectory)).toEqual({ index: 'embedded-2', documents: 242, tookMs: 35 });
    expect(log).toEqual(['Search index rebuilt: 242 documents in 35 ms (embedded-2).']);
  });

  it('answers problem+json 503 with Retry-After when the backend is unreachable; the client reports the detail', async () => {
    const { dataDirectory, admin } = await runtimeWith(async () => {
      throw new ServiceUnavailableError('The search backend cannot be reached: connect ECONNREFUSED.', 7);
    });
    const response = await fetch(`${admin}/search/reindex`, { method: 'POST' });
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('7');
    expect(await response.json()).toMatchObject({
      status: 503,
      title: 'Service Unavailable',
      detail: expect.stringContaining('ECONNREFUSED'),
    });
    await expect(requestLocalReindex(dataDirectory)).rejects.toThrow(
      'The local runtime answered 503: The search backend cannot be reached',
    );
  });

  it('serves nothing but POST /search/reindex', async () => {
    let calls = 0;
    const { admin } = await runtimeWith(async () => {
      calls += 1;
      return { index: 'embedded-2', documents: 0, tookMs: 0 };
    });
    expect((await fetch(`${admin}/search/reindex`)).status).toBe(404);
    expect((await fetch(`${admin}/anything`, { method: 'POST' })).status).toBe(404);
    expect(calls).toBe(0);
  });

  it('says what to do when no runtime runs on the data folder, or it is gone', async () => {
    const empty = await mkdtemp(join(tmpdir(), 'dss-admin-'));
    cleanups.push(() => rm(empty, { recursive: true, force: true }));
    await expect(requestLocalReindex(empty)).rejects.toThrow(/No local runtime found .*start it with npm start/);
    await writeFile(join(empty, RUNTIME_FILE), JSON.stringify({ pid: 1, admin: `http://127.0.0.1:${await freePort()}` }));
    await expect(requestLocalReindex(empty)).rejects.toThrow(/does not answer .*is npm start still running\?/);
  });
});
