/**
 * The local bus follower (functions/local/bus-follower.ts): hands the bus file's events of its detail types to its
 * handler as SQS messages of EventBridge envelopes, and keeps its offset so that a restart resumes after what was
 * handled, a failed batch is handed again, and a torn line is skipped.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LocalBusFollower } from '../../../functions/local/bus-follower.js';

let directory: string;
let followers: LocalBusFollower[];

beforeEach(async () => {
  directory = await mkdtemp(join(tmpdir(), 'dss-bus-follower-'));
  followers = [];
});

afterEach(async () => {
  for (const follower of followers) await follower.stop();
  await rm(directory, { recursive: true, force: true });
});

async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 10) {
    if (waited > 5_000) throw new Error('condition not met within 5 s');
    await sleep(10);
  }
}

const line = (type: string, n: number) => `${JSON.stringify({ type, company: 'acme', n, at: '2026-12-06T10:00:00.000Z' })}\n`;

/** A follower of the directory's file, recording the `n` of each event handed; `answer` decides each batch's response. */
async function follow(answer: (event: SQSEvent) => SQSBatchResponse | Promise<SQSBatchResponse> = () => ({ batchItemFailures: [] })) {
  const handed: number[] = [];
  const errors: string[] = [];
  const follower = new LocalBusFollower({
    eventsFile: join(directory, 'events.jsonl'),
    checkpointFile: join(directory, 'fanout.offset.json'),
    detailTypes: ['Wanted'],
    batchSize: 2,
    queue: 'WebhookEvents',
    region: 'local',
    intervalMs: 10,
    handler: async (event) => {
      const response = await answer(event);
      if (response.batchItemFailures.length === 0) {
        for (const record of event.Records) handed.push((JSON.parse(record.body) as { detail: { n: number } }).detail.n);
      }
      return response;
    },
    onError: (error) => errors.push(error.message),
  });
  followers.push(follower);
  await follower.start();
  return { follower, handed, errors };
}

describe('LocalBusFollower', () => {
  it('hands the events of its detail types, in order, in batches of its size', async () => {
    const sizes: number[] = [];
    const { handed } = await follow((event) => {
      sizes.push(event.Records.length);
      return { batchItemFailures: [] };
    });
    await writeFile(
      join(directory, 'events.jsonl'),
      [1, 2, 3].map((n) => line('Wanted', n)).join('') + line('Other', 4) + line('Wanted', 5),
    );
    await until(() => handed.length === 4);
    expect(handed).toEqual([1, 2, 3, 5]);
    expect(Math.max(...sizes)).toBe(2);
  });

  it('resumes after the last event handled when started again, and follows lines appended later', async () => {
    const file = join(directory, 'events.jsonl');
    const first = await follow();
    await writeFile(file, line('Wanted', 1) + line('Wanted', 2));
    await until(() => first.handed.length === 2);
    await first.follower.stop();
    await appendFile(file, line('Wanted', 3));
    const second = await follow();
    await until(() => second.handed.length === 1);
    await appendFile(file, line('Wanted', 4));
    await until(() => second.handed.length === 2);
    expect(second.handed).toEqual([3, 4]);
    // The offset is saved after the handler returns: stopping waits for that save.
    await second.follower.stop();
    expect(JSON.parse(await readFile(join(directory, 'fanout.offset.json'), 'utf8'))).toEqual({ offset: (await readFile(file)).length });
  });

  it('hands a failed batch again until it succeeds, without skipping it', async () => {
    let calls = 0;
    const { handed, errors } = await follow((event) =>
      ++calls === 1 ? { batchItemFailures: [{ itemIdentifier: event.Records[0]?.messageId ?? '' }] } : { batchItemFailures: [] },
    );
    await writeFile(join(directory, 'events.jsonl'), line('Wanted', 1));
    await until(() => handed.length === 1);
    expect(calls).toBe(2);
    expect(errors).toEqual(['1 of 1 bus events failed; handing them again']);
  });

  it('skips a line torn by a crash, and waits for a line still being written', async () => {
    const file = join(directory, 'events.jsonl');
    const { handed } = await follow();
    await writeFile(file, `{"type":"Wan\n${line('Wanted', 2)}{"type":"Wanted","n":3`);
    await until(() => handed.length === 1);
    expect(handed).toEqual([2]);
    await appendFile(file, ',"company":"acme"}\n');
    await until(() => handed.length === 2);
    expect(handed).toEqual([2, 3]);
  });

  it('starts over when the file is shorter than its offset (a reset data folder)', async () => {
    const file = join(directory, 'events.jsonl');
    await writeFile(join(directory, 'fanout.offset.json'), JSON.stringify({ offset: 10_000 }));
    await writeFile(file, line('Wanted', 1));
    const { handed } = await follow();
    await until(() => handed.length === 1);
  });

  it('starts at the end of an existing file when it has no checkpoint: past events are not handed', async () => {
    const file = join(directory, 'events.jsonl');
    await writeFile(file, line('Wanted', 1));
    const { handed } = await follow();
    await appendFile(file, line('Wanted', 2));
    await until(() => handed.length === 1);
    expect(handed).toEqual([2]);
  });
});
