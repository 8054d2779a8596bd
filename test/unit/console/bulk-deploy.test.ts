/**
 * The console's bulk deploy without a browser: chunks and their Idempotency-Keys, the sessionStorage journal (a
 * Map-backed Storage), a reload in the middle of a batch, the retry of 503/409 answers, and the counts per state and
 * cause.
 */
import { describe, expect, it } from 'vitest';
import {
  type Attempt,
  type BatchInput,
  BatchStopped,
  batchFingerprint,
  chunksOf,
  closeJournal,
  DEPLOY_JOURNAL_PREFIX,
  type DeploymentEntry,
  type DeploymentResultItem,
  deployEntries,
  findJournal,
  idempotencyKeyOf,
  journalKey,
  MAX_DEPLOYMENT_ENTRIES,
  markChunkDone,
  openJournal,
  planChunks,
  retryDelay,
  retrying,
  runBatch,
  type StorageLike,
  summarize,
} from '../../../console/src/deploy/batch.js';
import { DeploymentRequestBody } from '../../../functions/contract/schemas/deployments.js';
import { MAX_DEPLOYMENT_ENTRIES as SERVICE_MAX_ENTRIES } from '../../../functions/core/deployments/deployments.js';

/** A Storage of a Map, counting writes; it survives a "reload" as sessionStorage does. */
class MemoryStorage implements StorageLike {
  readonly map = new Map<string, string>();
  writes = 0;
  getItem(key: string): string | null {
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.writes += 1;
    this.map.set(key, value);
  }
  removeItem(key: string): void {
    this.map.delete(key);
  }
}

const ids = (n: number, prefix = 'kiosk') => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(5, '0')}`);
const input = (overrides: Partial<BatchInput> = {}): BatchInput => ({
  company: 'acme',
  scenario: 'acme-welcome',
  version: '1.1.0',
  ids: ids(12_000),
  ...overrides,
});
let counter = 0;
const newId = () => `batch-${++counter}`;

/** A fake service: answers SUCCESS per entry, replays a key's first answer, records the keys it saw. */
function fakeService() {
  const answered = new Map<string, DeploymentResultItem[]>();
  const executed: string[] = [];
  const seen: string[] = [];
  const send = async (entries: DeploymentEntry[], key: string) => {
    seen.push(key);
    const stored = answered.get(key);
    if (stored !== undefined) return { items: stored, replayed: true };
    executed.push(key);
    const items = entries.map(
      (entry, i): DeploymentResultItem => ({
        id: `${key}-${i}`,
        target: { type: entry.target.type, id: entry.target.id, subId: null },
        what: { type: entry.what.type, id: entry.what.id, subId: entry.what.subId },
        action: entry.action,
        state: 'SUCCESS',
        cause: null,
      }),
    );
    answered.set(key, items);
    return { items, replayed: false };
  };
  return { send, executed, seen };
}

describe('chunks and keys', () => {
  it('copies the service limit of entries per request', () => {
    expect(MAX_DEPLOYMENT_ENTRIES).toBe(SERVICE_MAX_ENTRIES);
  });

  it('splits 12,000 entries into 5,000 + 5,000 + 2,000, each a valid request body with its own key', () => {
    const chunks = planChunks('3f0c1b9e-5f4e-4c1e-9d7a-2b1f0e6c7a11', deployEntries('acme-welcome', '1.1.0', ids(12_000)));
    expect(chunks.map((chunk) => chunk.entries.length)).toEqual([5_000, 5_000, 2_000]);
    expect(chunks.map((chunk) => chunk.index)).toEqual([0, 1, 2]);
    expect(new Set(chunks.map((chunk) => chunk.key)).size).toBe(3);
    for (const chunk of chunks) {
      expect(chunk.key.length).toBeGreaterThanOrEqual(1);
      expect(chunk.key.length).toBeLessThanOrEqual(255);
      expect(DeploymentRequestBody.safeParse({ requests: chunk.entries }).success).toBe(true);
    }
    expect(chunks[0]?.entries[0]).toEqual({
      target: { type: 'DEVICE', id: 'kiosk-00000' },
      what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
      action: 'DEPLOY',
    });
    expect(chunks[2]?.entries.at(-1)?.target.id).toBe('kiosk-11999');
  });

  it('derives the keys from the batch id and the index only', () => {
    expect(idempotencyKeyOf('b1', 0)).toBe(idempotencyKeyOf('b1', 0));
    expect(idempotencyKeyOf('b1', 0)).not.toBe(idempotencyKeyOf('b1', 1));
    expect(idempotencyKeyOf('b1', 0)).not.toBe(idempotencyKeyOf('b2', 0));
    expect(() => idempotencyKeyOf('x'.repeat(300), 0)).toThrow(RangeError);
  });

  it('keeps a list of at most one chunk whole and refuses a chunk size below 1', () => {
    expect(chunksOf([1, 2, 3])).toEqual([[1, 2, 3]]);
    expect(chunksOf([])).toEqual([]);
    expect(() => chunksOf([1], 0)).toThrow(RangeError);
  });
});

describe('the sessionStorage journal', () => {
  it('is written before it is returned, with a new batch id, the order of ids and no chunk done', () => {
    const storage = new MemoryStorage();
    const { journal, resumed } = openJournal(storage, input(), newId);
    expect(resumed).toBe(false);
    expect(journal.chunks).toBe(3);
    expect(journal.done).toEqual([]);
    expect(JSON.parse(storage.getItem(journalKey(journal.fingerprint)) ?? 'null')).toEqual(journal);
  });

  it('resumes the same deploy (same devices in another order) with the same batch id and the first order of ids', () => {
    const storage = new MemoryStorage();
    const first = openJournal(storage, input(), newId).journal;
    markChunkDone(storage, first, 0);
    const reversed = input({ ids: [...input().ids].reverse() });
    const again = openJournal(storage, reversed, newId);
    expect(again.resumed).toBe(true);
    expect(again.journal.batchId).toBe(first.batchId);
    expect(again.journal.ids).toEqual(input().ids);
    expect(again.journal.done).toEqual([0]);
  });

  it('starts a new batch for another version, company or set of devices, and after the batch was closed', () => {
    const storage = new MemoryStorage();
    const first = openJournal(storage, input(), newId).journal;
    expect(openJournal(storage, input({ version: '1.0.0' }), newId).journal.batchId).not.toBe(first.batchId);
    expect(openJournal(storage, input({ company: 'globex' }), newId).journal.batchId).not.toBe(first.batchId);
    expect(openJournal(storage, input({ ids: ids(11_999) }), newId).journal.batchId).not.toBe(first.batchId);
    closeJournal(storage, first);
    expect(findJournal(storage, input())).toBeUndefined();
    expect(openJournal(storage, input(), newId).journal.batchId).not.toBe(first.batchId);
  });

  it('is stored under DEPLOY_JOURNAL_PREFIX: removing the keys with that prefix (as sign-out does) forgets an interrupted deploy', () => {
    const storage = new MemoryStorage();
    storage.setItem('dss.other', 'kept');
    const first = openJournal(storage, input(), newId).journal;
    markChunkDone(storage, first, 0);
    expect(findJournal(storage, input())?.batchId).toBe(first.batchId);
    for (const key of [...storage.map.keys()]) if (key.startsWith(DEPLOY_JOURNAL_PREFIX)) storage.removeItem(key);
    expect([...storage.map.keys()]).toEqual(['dss.other']);
    expect(findJournal(storage, input())).toBeUndefined();
    const again = openJournal(storage, input(), newId);
    expect(again.resumed).toBe(false);
    expect(again.journal.batchId).not.toBe(first.batchId);
  });

  it('ignores what is not a journal of this batch', () => {
    const storage = new MemoryStorage();
    storage.setItem(journalKey(batchFingerprint(input())), '{not json');
    expect(findJournal(storage, input())).toBeUndefined();
    storage.setItem(journalKey(batchFingerprint(input())), JSON.stringify({ batchId: 'x', fingerprint: 'other', ids: [], done: [] }));
    expect(findJournal(storage, input())).toBeUndefined();
  });
});

describe('runBatch', () => {
  it('sends each chunk once with its key, journals each answer and forgets the batch at the end', async () => {
    const storage = new MemoryStorage();
    const service = fakeService();
    const progress: number[] = [];
    const outcome = await runBatch(storage, input(), service.send, { newId, onProgress: (done) => progress.push(done) });
    expect(outcome.items).toHaveLength(12_000);
    expect(outcome.resumed).toBe(false);
    expect(outcome.replayedChunks).toBe(0);
    expect(service.executed).toEqual([0, 1, 2].map((i) => idempotencyKeyOf(outcome.journal.batchId, i)));
    expect(progress).toEqual([0, 5_000, 10_000, 12_000]);
    expect(storage.map.size).toBe(0);
  });

  it('after a reload mid-way, the same deploy resends the same keys: answered chunks are replayed, not executed twice', async () => {
    const storage = new MemoryStorage();
    const service = fakeService();
    let calls = 0;
    // The tab "reloads" while the third request is on its way: the service executes it, the answer is lost.
    const interrupted = async (entries: DeploymentEntry[], key: string) => {
      const answer = await service.send(entries, key);
      if (++calls === 3) throw new Error('the page was reloaded');
      return answer;
    };
    const stopped = await runBatch(storage, input(), interrupted, { newId }).catch((error: unknown) => error);
    expect(stopped).toBeInstanceOf(BatchStopped);
    expect((stopped as BatchStopped).chunk).toBe(2);
    const left = findJournal(storage, input());
    expect(left?.done).toEqual([0, 1]);

    const resumed = await runBatch(storage, input({ ids: [...input().ids].reverse() }), service.send, { newId });
    expect(resumed.resumed).toBe(true);
    expect(resumed.journal.batchId).toBe(left?.batchId);
    expect(resumed.replayedChunks).toBe(3);
    // Each key executed exactly once, all in the first run: the second one got the stored answers.
    expect(service.executed).toEqual([0, 1, 2].map((i) => idempotencyKeyOf(resumed.journal.batchId, i)));
    expect(resumed.items.map((item) => item.target.id)).toEqual(input().ids);
    expect(storage.map.size).toBe(0);
  });

  it('refuses to send anything when the journal cannot be stored', async () => {
    const full: StorageLike = {
      getItem: () => null,
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
      removeItem: () => {},
    };
    const service = fakeService();
    await expect(runBatch(full, input(), service.send, { newId })).rejects.toThrow('QuotaExceededError');
    expect(service.seen).toEqual([]);
  });
});

describe('retrying', () => {
  const failure = (status: number, retryAfter: string | null = null): Attempt<string> => ({
    ok: false,
    status,
    retryAfter,
    failure: new Error(`status ${status}`),
  });

  it('waits Retry-After seconds after a 503, then returns the answer', async () => {
    const waits: number[] = [];
    const answers = [failure(503, '2'), failure(409), { ok: true, value: 'done' } as const];
    const value = await retrying(async () => answers.shift() ?? failure(500), { sleep: async (ms) => void waits.push(ms), backoff: 100 });
    expect(value).toBe('done');
    expect(waits).toEqual([2_000, 200]);
  });

  it('gives up after a few retries with the last failure, and does not retry a 400', async () => {
    let attempts = 0;
    const sleep = async () => {};
    await expect(
      retrying(
        async () => {
          attempts += 1;
          return failure(503);
        },
        { retries: 3, sleep },
      ),
    ).rejects.toThrow('status 503');
    expect(attempts).toBe(4);
    attempts = 0;
    await expect(
      retrying(
        async () => {
          attempts += 1;
          return failure(400);
        },
        { sleep },
      ),
    ).rejects.toThrow('status 400');
    expect(attempts).toBe(1);
  });

  it('backs off exponentially without Retry-After, and caps a long Retry-After', () => {
    expect([0, 1, 2].map((retry) => retryDelay(null, retry, 1_000))).toEqual([1_000, 2_000, 4_000]);
    expect(retryDelay('3600', 0, 1_000, 30_000)).toBe(30_000);
    expect(retryDelay('not a number', 1, 500)).toBe(1_000);
    // A Retry-After of 0, or an empty one, would retry at once: the backoff spaces the retries instead.
    expect(retryDelay('0', 2, 500)).toBe(2_000);
    expect(retryDelay('', 0, 500)).toBe(500);
  });
});

describe('summarize', () => {
  it('counts per state and cause, successes first, then failures by frequency', () => {
    const item = (state: 'SUCCESS' | 'FAILURE', cause: DeploymentResultItem['cause']) => ({ state, cause });
    expect(
      summarize([
        item('FAILURE', 'TARGET_NOT_FOUND'),
        item('SUCCESS', null),
        item('FAILURE', 'ALREADY_DEPLOYED'),
        item('FAILURE', 'ALREADY_DEPLOYED'),
        item('SUCCESS', null),
      ]),
    ).toEqual([
      { state: 'SUCCESS', cause: null, count: 2 },
      { state: 'FAILURE', cause: 'ALREADY_DEPLOYED', count: 2 },
      { state: 'FAILURE', cause: 'TARGET_NOT_FOUND', count: 1 },
    ]);
  });
});
