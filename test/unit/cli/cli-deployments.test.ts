/**
 * The pure parts of `dss deploy`/`undeploy` (cli/batch.ts) and of `dss search` arguments: SCENARIO@VERSION and
 * `--devices` parsing, chunking, the batch fingerprint and keys, the journal that makes a rerun of an interrupted run
 * resume it (same keys) while a later run executes anew (new keys), retries on 409/503, and the summary.
 */
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filterArguments } from '../../../cli/arguments.js';
import {
  type BatchInput,
  batchFingerprint,
  type ChunkAnswer,
  chunksOf,
  type DeploymentEntry,
  type DeploymentResultItem,
  idempotencyKey,
  journalPath,
  MAX_CHUNK_SIZE,
  parseDeviceList,
  runBatch,
  sendWithRetry,
  summarize,
} from '../../../cli/batch.js';
import { filterLabel, parseSort } from '../../../cli/commands/search.js';
import { UsageError } from '../../../cli/output.js';
import { ApiError } from '../../../client/index.js';
import { MAX_DEPLOYMENT_ENTRIES } from '../../../functions/core/deployments/deployments.js';

let directory: string;

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-cli-batch-'));
});

afterEach(async () => {
  await rm(directory, { recursive: true, force: true });
});

const input = (overrides: Partial<BatchInput> = {}): BatchInput => ({
  baseUrl: 'http://127.0.0.1:3000',
  company: 'acme',
  action: 'DEPLOY',
  scenario: 'acme-welcome',
  version: '1.2.0',
  ids: Array.from({ length: 12 }, (_, index) => `kiosk-${index}`),
  chunkSize: 5,
  ...overrides,
});

/**
 * A service in miniature: deploys to a set of devices (ALREADY_DEPLOYED the second time), and keeps each
 * Idempotency-Key's answer to replay it, as the real route does. `failAt` makes the call for that chunk index fail
 * once, like a connection lost mid-run.
 */
class FakeService {
  readonly deployed = new Set<string>();
  readonly answers = new Map<string, DeploymentResultItem[]>();
  readonly keys: (string | undefined)[] = [];
  executions = 0;
  failAt: number | undefined;

  send = async (entries: DeploymentEntry[], key: string | undefined): Promise<ChunkAnswer> => {
    this.keys.push(key);
    if (this.failAt !== undefined && key?.endsWith(`-${this.failAt}`)) {
      this.failAt = undefined;
      throw new TypeError('fetch failed');
    }
    const stored = key === undefined ? undefined : this.answers.get(key);
    if (stored !== undefined) return { items: stored, replayed: true };
    this.executions += 1;
    const items = entries.map((entry, index): DeploymentResultItem => {
      const already = this.deployed.has(entry.target.id);
      this.deployed.add(entry.target.id);
      return {
        id: `item-${this.executions}-${index}`,
        target: { type: 'DEVICE', id: entry.target.id, subId: null },
        what: entry.what,
        action: entry.action,
        state: already ? 'FAILURE' : 'SUCCESS',
        cause: already ? 'ALREADY_DEPLOYED' : null,
      };
    });
    if (key !== undefined) this.answers.set(key, items);
    return { items, replayed: false };
  };
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('--devices', () => {
  it('trims the ids, drops blanks and keeps each once in first-seen order', () => {
    expect(parseDeviceList(' b, a,,b ,c ')).toEqual(['b', 'a', 'c']);
  });

  it('refuses an empty list, more than 10,000 ids and an id longer than the body accepts', () => {
    expect(() => parseDeviceList(' , ')).toThrow(UsageError);
    const ids = Array.from({ length: 10_001 }, (_, index) => `d${index}`);
    expect(() => parseDeviceList(ids.join(','))).toThrow(/10001 ids; at most 10000/);
    expect(parseDeviceList(ids.slice(0, 10_000).join(','))).toHaveLength(10_000);
    expect(() => parseDeviceList(`ok,${'x'.repeat(257)}`)).toThrow(UsageError);
  });
});

describe('chunks', () => {
  it('splits in order, the last chunk shorter', () => {
    expect(chunksOf([1, 2, 3, 4, 5, 6, 7], 3)).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(chunksOf([1, 2], 5)).toEqual([[1, 2]]);
    expect(() => chunksOf([1], 0)).toThrow(RangeError);
  });

  it('never exceeds what the service accepts per request', () => {
    expect(MAX_CHUNK_SIZE).toBe(MAX_DEPLOYMENT_ENTRIES);
  });
});

describe('fingerprint and keys', () => {
  it('is the same for the same input and differs when anything that makes the bodies or their address differs', () => {
    const base = batchFingerprint(input());
    expect(batchFingerprint(input())).toBe(base);
    expect(batchFingerprint(input({ baseUrl: 'http://127.0.0.1:3000/' }))).toBe(base);
    const variants: Partial<BatchInput>[] = [
      { baseUrl: 'https://api.example.com' },
      { company: 'globex' },
      { action: 'UNDEPLOY' },
      { scenario: 'other' },
      { version: '1.2.1' },
      { ids: [...input().ids].reverse() },
      { ids: input().ids.slice(1) },
      { note: 'Spring campaign' },
      { note: '' },
      { chunkSize: 6 },
    ];
    const fingerprints = variants.map((variant) => batchFingerprint(input(variant)));
    expect(new Set([base, ...fingerprints]).size).toBe(variants.length + 1);
  });

  it('gives chunk i of a run the key dss-<run id>-<i>, within the 255 characters the service accepts', () => {
    const key = idempotencyKey('01JABCDEFGHJKMNPQRSTVWXYZ0', 999);
    expect(key).toBe('dss-01JABCDEFGHJKMNPQRSTVWXYZ0-999');
    expect(key.length).toBeLessThanOrEqual(255);
  });
});

describe('a batch run', () => {
  it('writes its journal before the first chunk, sends each chunk with its key, and removes the journal at the end', async () => {
    const service = new FakeService();
    const path = journalPath(directory, batchFingerprint(input()));
    const journalBeforeFirstChunk: boolean[] = [];
    const progress: number[] = [];
    const outcome = await runBatch(input(), {
      directory,
      dryRun: false,
      send: async (entries, key) => {
        journalBeforeFirstChunk.push(await exists(path));
        return service.send(entries, key);
      },
      progress: (done) => progress.push(done),
    });
    expect(journalBeforeFirstChunk).toEqual([true, true, true]);
    expect(outcome.runId).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(service.keys).toEqual([0, 1, 2].map((index) => `dss-${outcome.runId}-${index}`));
    expect(outcome.items.map((item) => item.target.id)).toEqual(input().ids);
    expect(outcome).toMatchObject({ chunks: 3, resumed: false, replayedChunks: 0, dryRun: false });
    expect(progress).toEqual([0, 5, 10, 12]);
    expect(await exists(path)).toBe(false);
  });

  it('resumes an interrupted run with the same keys: answered chunks are replayed, not executed twice', async () => {
    const service = new FakeService();
    service.failAt = 2;
    await expect(runBatch(input(), { directory, dryRun: false, send: service.send })).rejects.toThrow('fetch failed');
    const path = journalPath(directory, batchFingerprint(input()));
    const journal = JSON.parse(await readFile(path, 'utf8'));
    expect(journal.answered).toEqual([0, 1]);
    const firstKeys = service.keys.slice(0, 2);

    const notes: string[] = [];
    const outcome = await runBatch(input(), { directory, dryRun: false, send: service.send, note: (line) => notes.push(line) });
    expect(outcome.resumed).toBe(true);
    expect(outcome.runId).toBe(journal.runId);
    expect(service.keys.slice(3, 5)).toEqual(firstKeys);
    expect(outcome.replayedChunks).toBe(2);
    expect(service.executions).toBe(3);
    expect(notes.join('\n')).toContain('Resuming an interrupted run');
    expect(summarize(outcome.items)).toEqual([{ state: 'SUCCESS', cause: null, count: 12 }]);
    expect(await readdir(join(directory, 'batches'))).toEqual([]);
  });

  it('executes a later run with the same input anew, under new keys, instead of replaying the first run', async () => {
    const service = new FakeService();
    const first = await runBatch(input(), { directory, dryRun: false, send: service.send });
    const second = await runBatch(input(), { directory, dryRun: false, send: service.send });
    expect(second.runId).not.toBe(first.runId);
    expect(second.resumed).toBe(false);
    expect(second.replayedChunks).toBe(0);
    expect(summarize(second.items)).toEqual([{ state: 'FAILURE', cause: 'ALREADY_DEPLOYED', count: 12 }]);
  });

  it('keeps separate journals for runs that differ, so one never resumes with the keys of another', async () => {
    const service = new FakeService();
    service.failAt = 1;
    await expect(runBatch(input(), { directory, dryRun: false, send: service.send })).rejects.toThrow();
    const outcome = await runBatch(input({ note: 'another run' }), { directory, dryRun: false, send: service.send });
    expect(outcome.resumed).toBe(false);
    expect(await readdir(join(directory, 'batches'))).toEqual([`${batchFingerprint(input())}.json`]);
  });

  it('sends a dry run without keys and without a journal', async () => {
    const service = new FakeService();
    const outcome = await runBatch(input(), {
      directory,
      dryRun: true,
      send: async (entries, key) => {
        expect(await exists(join(directory, 'batches'))).toBe(false);
        return service.send(entries, key);
      },
    });
    expect(service.keys).toEqual([undefined, undefined, undefined]);
    expect(outcome.runId).toBeUndefined();
  });

  it('refuses an answer that does not have one item per entry', async () => {
    const send = async (): Promise<ChunkAnswer> => ({ items: [], replayed: false });
    await expect(runBatch(input(), { directory, dryRun: true, send })).rejects.toThrow('answered 0 items for a chunk of 5 entries');
  });
});

describe('retries', () => {
  const problem = (status: number, headers: Record<string, string> = {}) =>
    new ApiError(status, { type: 'about:blank', title: 'x', status, detail: 'x' }, new Response(null, { status, headers }));
  const fast = { minTimeout: 1, maxTimeout: 1, maxRetryAfter: 5 };

  it('retries 409 (the key still in progress) and 503 (honouring Retry-After) until the answer comes', async () => {
    const failures = [problem(409), problem(503, { 'retry-after': '1' }), problem(409)];
    let calls = 0;
    const notes: string[] = [];
    const answer = await sendWithRetry(
      async () => {
        calls += 1;
        const failure = failures.shift();
        if (failure !== undefined) throw failure;
        return 'answer';
      },
      { ...fast, note: (line) => notes.push(line) },
    );
    expect(answer).toBe('answer');
    expect(calls).toBe(4);
    expect(notes).toHaveLength(3);
  });

  it('does not retry other answers or a failed connection, and gives up after its retries', async () => {
    for (const error of [problem(400), problem(422), new TypeError('fetch failed')]) {
      let calls = 0;
      await expect(
        sendWithRetry(async () => {
          calls += 1;
          throw error;
        }, fast),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
    }
    let calls = 0;
    await expect(
      sendWithRetry(
        async () => {
          calls += 1;
          throw problem(409);
        },
        { ...fast, retries: 2 },
      ),
    ).rejects.toMatchObject({ status: 409 });
    expect(calls).toBe(3);
  });
});

describe('summary', () => {
  it('counts the items per state and cause: successes first, then failures, most frequent first', () => {
    const item = (state: 'SUCCESS' | 'FAILURE', cause: DeploymentResultItem['cause']) => ({ state, cause }) as DeploymentResultItem;
    const items = [
      item('FAILURE', 'WHAT_NOT_FOUND'),
      ...Array.from({ length: 3 }, () => item('SUCCESS', null)),
      ...Array.from({ length: 2 }, () => item('FAILURE', 'TARGET_NOT_FOUND')),
    ];
    expect(summarize(items)).toEqual([
      { state: 'SUCCESS', cause: null, count: 3 },
      { state: 'FAILURE', cause: 'TARGET_NOT_FOUND', count: 2 },
      { state: 'FAILURE', cause: 'WHAT_NOT_FOUND', count: 1 },
    ]);
    expect(summarize([])).toEqual([]);
  });
});

describe('search arguments', () => {
  it('turns FIELD=VALUE arguments into repeated query parameters', () => {
    expect(filterArguments(['connection.state=CONNECTED', 'company=acme', 'connection.state=UNKNOWN'])).toEqual({
      'connection.state': ['CONNECTED', 'UNKNOWN'],
      company: ['acme'],
    });
    for (const bad of ['connection.state', '=x', 'company=']) expect(() => filterArguments([bad]), bad).toThrow(UsageError);
  });

  it('reads --sort as field[:asc|desc]', () => {
    expect(parseSort('serial')).toEqual({ sort: 'serial' });
    expect(parseSort('updated:desc')).toEqual({ sort: 'updated', direction: 'DESC' });
    expect(parseSort('location.name:ASC')).toEqual({ sort: 'location.name', direction: 'ASC' });
    expect(() => parseSort('updated:down')).toThrow(UsageError);
  });

  it('names a filter in `dss filters` by its display name, then the field to give as FIELD=VALUE', () => {
    expect(filterLabel({ name: 'Connection state', field: 'connection.state' })).toBe('Connection state (connection.state)');
    expect(filterLabel({ name: 'Resource type', field: 'type' })).toBe('Resource type (type)');
  });
});
