/**
 * The embedded search index's snapshot (functions/local/search-snapshot.ts) and how the local runtime starts from it
 * (functions/local/search-startup.ts): the file round trip and its atomic replacement, the snapshots it refuses
 * (another format or version, truncated, other streams, a trimmed position or a shard gone) and the rebuild it then
 * falls back to, and snapshots taken only when the index moved on. The streams are a mocked DynamoDB Streams client.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import {
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  TrimmedDataAccessException,
} from '@aws-sdk/client-dynamodb-streams';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DocumentCodec } from '../../../functions/adapters/embedded/document-codec.js';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { SwappableSearchIndex } from '../../../functions/adapters/embedded/swappable-search-index.js';
import type { SearchDocument } from '../../../functions/core/search/documents.js';
import {
  readSearchSnapshot,
  removeAbandonedSnapshotFiles,
  SEARCH_SNAPSHOT_VERSION,
  type SearchSnapshot,
  type SearchSnapshotContents,
  searchSnapshotFile,
  UnreadableSnapshotError,
  writeSearchSnapshot,
} from '../../../functions/local/search-snapshot.js';
import { SearchSnapshots, startEmbeddedSearch } from '../../../functions/local/search-startup.js';
import { DynamoDbStreamPoller } from '../../../functions/local/stream-poller.js';

const STREAM = 'arn:aws:dynamodb:ddblocal:000000000000:table/devices/stream/2026-11-22T00:00:00.000';
const SHARD = `${STREAM}|shard-1`;
const streams = mockClient(DynamoDBStreamsClient);

function device(id: string, city = 'Lyon'): SearchDocument {
  return {
    type: 'DEVICE',
    id,
    company: 'acme',
    serial: `ACM-${id}`,
    created: '2026-01-01T00:00:00.000Z',
    updated: '2026-01-01T00:00:00.000Z',
    connection: { state: 'CONNECTED' },
    location: { name: `Acme Store ${city}` },
  };
}

let folder: string;
let file: string;
beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'dss-snapshot-'));
  file = searchSnapshotFile(folder);
});
afterEach(async () => {
  streams.reset();
  await rm(folder, { recursive: true, force: true });
});

/** What a snapshot of an index holding `documents` is written from. */
async function contentsOf(documents: SearchDocument[]): Promise<SearchSnapshotContents> {
  const index = new EmbeddedSearchIndex();
  await index.upsert(documents);
  const contents = index.snapshotContents();
  return { ...contents, text: [...(contents.text ?? [])] };
}

/** The documents of a snapshot read back, decoded with its table. */
function decoded(snapshot: SearchSnapshot | undefined): SearchDocument[] | undefined {
  if (snapshot === undefined) return undefined;
  const codec = DocumentCodec.withTable(snapshot.header.strings);
  return snapshot.documents.map((bytes) => codec.decode(bytes));
}

describe('search snapshot file', () => {
  it('reads back the documents, the codec table and the stream positions it was written with', async () => {
    const documents = [device('k1'), device('k2', 'Paris')];
    const contents = await contentsOf(documents);
    const bytes = await writeSearchSnapshot(
      file,
      { streamArns: [STREAM], positions: new Map([[SHARD, '000042']]), contents },
      new Date('2026-11-23T08:00:00.000Z'),
    );

    expect(bytes).toBeGreaterThan(0);
    const read = await readSearchSnapshot(file);
    expect(read?.header).toEqual({
      format: 'device-scenario-service/search-snapshot',
      version: SEARCH_SNAPSHOT_VERSION,
      created: '2026-11-23T08:00:00.000Z',
      streamArns: [STREAM],
      positions: { [SHARD]: '000042' },
      documents: 2,
      strings: [...contents.strings],
      text: Buffer.concat(contents.text ?? []).length,
    });
    expect(decoded(read)).toEqual(documents);
    expect(Buffer.from(read?.text ?? []).equals(Buffer.concat(contents.text ?? []))).toBe(true);
    expect(read?.header.text).toBeGreaterThan(0);
    expect(await readSearchSnapshot(join(folder, 'none.bin'))).toBeUndefined();
  });

  it('replaces the previous snapshot whole or not at all (no temporary file left behind), and then the version 1 file', async () => {
    await writeSearchSnapshot(file, {
      streamArns: [STREAM],
      positions: new Map([[SHARD, '1']]),
      contents: await contentsOf([device('k1')]),
    });
    const good = await contentsOf([device('k3')]);
    const broken = { strings: good.strings, documents: [...good.documents, 'not bytes' as unknown as Uint8Array] };

    await expect(
      writeSearchSnapshot(file, { streamArns: [STREAM], positions: new Map([[SHARD, '2']]), contents: broken }),
    ).rejects.toThrow();

    expect(decoded(await readSearchSnapshot(file))?.map((document) => document.id)).toEqual(['k1']);
    await writeFile(join(folder, 'search', 'snapshot.jsonl'), '{"format":"device-scenario-service/search-snapshot","version":1}\n');
    expect((await readdir(join(folder, 'search'))).sort()).toEqual(['snapshot.bin', 'snapshot.jsonl']);
    await writeSearchSnapshot(file, { streamArns: [STREAM], positions: new Map([[SHARD, '3']]), contents: good });
    expect(await readdir(join(folder, 'search'))).toEqual(['snapshot.bin']);
  });

  it('reads the full text into memory of its own, which the documents kept by the index do not hold', async () => {
    const documents = Array.from({ length: 300 }, (_, n) => device(`k${n}`, `City${n}`));
    const contents = await contentsOf(documents);
    await writeSearchSnapshot(file, { streamArns: [STREAM], positions: new Map(), contents });

    const read = await readSearchSnapshot(file);

    expect(Buffer.from(read?.text ?? []).equals(Buffer.concat(contents.text ?? []))).toBe(true);
    expect(decoded(read)).toEqual(documents);
    expect(read?.text?.length).toBeGreaterThan(4096);
    expect(read?.documents.every((document) => document.buffer !== read.text?.buffer)).toBe(true);
  });

  it('reads a version 2 file, which has no full text after its documents', async () => {
    const contents = await contentsOf([device('k1'), device('k2', 'Paris')]);
    await writeSearchSnapshot(file, { streamArns: [STREAM], positions: new Map(), contents: { ...contents, text: undefined } });
    const bytes = gunzipSync(await readFile(file));
    const end = bytes.indexOf(0x0a);
    const header = JSON.parse(bytes.subarray(0, end).toString()) as Record<string, unknown>;
    expect(header.text).toBe(0);
    delete header.text;
    await writeFile(file, Buffer.concat([Buffer.from(JSON.stringify({ ...header, version: 2 })), bytes.subarray(end)]));

    const read = await readSearchSnapshot(file);

    expect(read?.header.version).toBe(2);
    expect(read?.text).toBeUndefined();
    expect(decoded(read)?.map((document) => document.id)).toEqual(['k1', 'k2']);
  });

  it('reads a file of several gzip members, whose trailer gives only the last one’s size', async () => {
    const contents = await contentsOf([device('k1'), device('k2', 'Paris'), device('k3')]);
    await writeSearchSnapshot(file, { streamArns: [STREAM], positions: new Map(), contents });
    const bytes = gunzipSync(await readFile(file));
    await writeFile(file, Buffer.concat([gzipSync(bytes.subarray(0, 40)), gzipSync(bytes.subarray(40))]));

    const read = await readSearchSnapshot(file);

    expect(decoded(read)?.map((document) => document.id)).toEqual(['k1', 'k2', 'k3']);
    expect(Buffer.from(read?.text ?? []).equals(Buffer.concat(contents.text ?? []))).toBe(true);
  });

  it('refuses a file of another format or version, and a truncated or damaged one', async () => {
    await writeSearchSnapshot(file, {
      streamArns: [STREAM],
      positions: new Map(),
      contents: await contentsOf([device('k1'), device('k2')]),
    });
    const compressed = await readFile(file);
    // Written through gzip; what it holds is read alike without it (a file the runtime wrote before).
    expect([...compressed.subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    const bytes = gunzipSync(compressed);
    expect((await readSearchSnapshot(file))?.documents).toHaveLength(2);
    await writeFile(file, compressed.subarray(0, compressed.length - 12));
    await expect(readSearchSnapshot(file)).rejects.toThrow(/cannot be decompressed .*truncated or damaged/);
    await writeFile(file, bytes);
    expect((await readSearchSnapshot(file))?.documents).toHaveLength(2);
    const end = bytes.indexOf(0x0a);
    const header = bytes.subarray(0, end).toString();
    const body = bytes.subarray(end);

    await writeFile(file, Buffer.concat([Buffer.from(header.replace(`"version":${SEARCH_SNAPSHOT_VERSION}`, '"version":99')), body]));
    await expect(readSearchSnapshot(file)).rejects.toThrow(/version 99 snapshot; this runtime reads versions 2 and 3/);
    await writeFile(file, '{"format":"something else"}\n');
    await expect(readSearchSnapshot(file)).rejects.toThrow(/is not a search snapshot/);
    await writeFile(file, `${header}\n`);
    await expect(readSearchSnapshot(file)).rejects.toThrow(/holds 0 documents; its header says 2 \(truncated\)/);
    await writeFile(file, bytes.subarray(0, bytes.length - 3));
    await expect(readSearchSnapshot(file)).rejects.toThrow(/bytes of full text after its documents; its header says \d+ \(truncated/);
    await writeFile(file, bytes.subarray(0, bytes.length - Number(JSON.parse(header).text) - 3));
    await expect(readSearchSnapshot(file)).rejects.toThrow(/cut short \(truncated\)/);
    await writeFile(file, bytes.subarray(0, 20));
    await expect(readSearchSnapshot(file)).rejects.toThrow(UnreadableSnapshotError);
  });
});

/** One open shard `shard-1` holding records 1…10, trimmed before record `trimmedBefore`. */
function stream(options: { trimmedBefore?: number } = {}) {
  const requests: string[] = [];
  streams.on(DescribeStreamCommand).resolves({
    StreamDescription: { Shards: [{ ShardId: 'shard-1', SequenceNumberRange: { StartingSequenceNumber: '1' } }] },
  });
  streams.on(GetShardIteratorCommand).callsFake((input: { ShardIteratorType: string; SequenceNumber?: string }) => {
    requests.push(`${input.ShardIteratorType}${input.SequenceNumber === undefined ? '' : ` ${input.SequenceNumber}`}`);
    if (input.ShardIteratorType === 'AFTER_SEQUENCE_NUMBER' && Number(input.SequenceNumber) < (options.trimmedBefore ?? 0)) {
      throw new TrimmedDataAccessException({ message: 'trimmed', $metadata: {} });
    }
    return { ShardIterator: 'iterator' };
  });
  streams.on(GetRecordsCommand).resolves({ Records: [], NextShardIterator: 'iterator' });
  return requests;
}

describe('startEmbeddedSearch', () => {
  const started = async (options: { arns?: string[] } = {}) => {
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
    const poller = new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async () => undefined);
    const calls: string[] = [];
    const logged: string[] = [];
    const start = await startEmbeddedSearch({
      index,
      poller,
      streamArns: options.arns ?? [STREAM],
      snapshotFile: file,
      rebuild: async () => {
        calls.push('rebuild');
        return index.rebuild(async (sink) => {
          await sink.upsert([device('scanned')]);
          return 1;
        });
      },
      mark: async () => {
        calls.push('mark');
      },
      log: (message) => logged.push(message),
    });
    const found = await index.search({
      companies: ['acme'],
      filters: new Map(),
      global: 'Paris',
      sort: { field: 'relevance', direction: 'DESC' },
      page: 1,
      pageSize: 10,
    });
    return { start, calls, logged, poller, found: found.resources.map((document) => document.id) };
  };
  const snapshotOf = async (position: string) =>
    writeSearchSnapshot(file, {
      streamArns: [STREAM],
      positions: new Map([[SHARD, position]]),
      contents: await contentsOf([device('k1', 'Paris')]),
    });

  it('loads a usable snapshot and reads the streams on after its positions', async () => {
    const requests = stream();
    await snapshotOf('7');

    const { start, calls, logged, poller, found } = await started();

    expect(start).toEqual({ path: 'snapshot', documents: 1, tookMs: expect.any(Number), withText: true });
    expect(calls).toEqual([]);
    expect(requests).toEqual(['AFTER_SEQUENCE_NUMBER 7']);
    expect(poller.shardPositions()).toEqual(new Map([[SHARD, '7']]));
    expect(found).toEqual(['k1']);
    expect(logged).toEqual([
      expect.stringMatching(/^Search index loaded from the snapshot of .* \(1 documents, with their full text\) in \d+\.\d s;/),
    ]);
  });

  it('rebuilds from the tables, streams read from LATEST and marked, when there is no usable snapshot', async () => {
    const cases: [string, () => Promise<unknown>, string[] | undefined, RegExp][] = [
      ['none', async () => undefined, undefined, /no snapshot yet/],
      [
        'damaged',
        () => mkdir(dirname(file), { recursive: true }).then(() => writeFile(file, 'not json\n')),
        undefined,
        /its first line is not JSON/,
      ],
      ['other streams', () => snapshotOf('7'), ['arn:other'], /taken of other streams/],
      ['trimmed', () => snapshotOf('3'), undefined, /snapshot is stale \(Cannot read shard-1 after 3: trimmed\)/],
    ];
    for (const [name, prepare, arns, reason] of cases) {
      streams.reset();
      await rm(file, { force: true });
      const requests = stream({ trimmedBefore: 5 });
      await prepare();

      const { start, calls, logged, found } = await started(arns === undefined ? {} : { arns });

      expect({ name, path: start.path, reason: start.reason }).toEqual({ name, path: 'rebuild', reason: expect.stringMatching(reason) });
      expect(calls).toEqual(['mark', 'rebuild']);
      expect(requests.at(-1)).toBe('LATEST');
      expect(found).toEqual([]);
      expect(logged).toEqual([expect.stringMatching(/^Search index rebuilt from a parallel scan of the tables \(1 documents\)/)]);
    }
  });
});

describe('unfinished snapshot files', () => {
  /** The pid of a process that has exited (a real one: the startup path asks the system, not a fake). */
  const exitedPid = async () => {
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'exit');
    return child.pid as number;
  };

  it('are removed at start when the run that wrote them is gone, and the search starts as usual', async () => {
    stream();
    const dead = [await exitedPid(), await exitedPid()];
    await mkdir(dirname(file), { recursive: true });
    for (const pid of dead) await writeFile(`${file}.${pid}.tmp`, '{"format":"device-scenario-service/search-snapshot"');
    await writeFile(join(dirname(file), 'notes.tmp'), 'not ours');
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
    const logged: string[] = [];

    const start = await startEmbeddedSearch({
      index,
      poller: new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async () => undefined),
      streamArns: [STREAM],
      snapshotFile: file,
      rebuild: () => index.rebuild(async () => 0),
      mark: async () => undefined,
      log: (message) => logged.push(message),
    });

    expect(start.path).toBe('rebuild');
    expect((await readdir(dirname(file))).sort()).toEqual(['notes.tmp']);
    expect(logged[0]).toMatch(/^Removed 2 unfinished search snapshot file\(s\) of stopped runs: snapshot\.bin\.\d+\.tmp, /);
  });

  it('are kept while the process writing them runs', async () => {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(`${file}.101.tmp`, 'being written');
    await writeFile(`${file}.202.tmp`, 'abandoned');
    await writeFile(`${file}.${process.pid}.tmp`, 'this process, before it writes');

    const removed = await removeAbandonedSnapshotFiles(file, (pid) => pid === 101);

    expect(removed.sort()).toEqual([`snapshot.bin.${process.pid}.tmp`, 'snapshot.bin.202.tmp'].sort());
    expect(await readdir(dirname(file))).toEqual(['snapshot.bin.101.tmp']);
  });

  it('are nothing to remove when the data folder has no search folder yet', async () => {
    expect(await removeAbandonedSnapshotFiles(join(folder, 'absent', 'snapshot.bin'))).toEqual([]);
  });
});

describe('SearchSnapshots', () => {
  it('writes a snapshot only when every position is known and the index moved on since the last one', async () => {
    stream();
    const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
    await index.upsert([device('k1')]);
    const newPoller = () => new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async () => undefined);
    const atLatest = newPoller();
    await atLatest.positionAtLatest();
    expect(await new SearchSnapshots({ index, poller: atLatest, streamArns: [STREAM], file, log: () => undefined }).take()).toEqual({
      written: false,
      why: 'position unknown',
    });

    const poller = newPoller();
    await poller.resumeAfter(new Map([[SHARD, '7']]));
    const snapshots = new SearchSnapshots({ index, poller, streamArns: [STREAM], file, log: () => undefined });
    expect(await snapshots.take()).toMatchObject({ written: true, documents: 1 });
    expect(await snapshots.take()).toEqual({ written: false, why: 'unchanged' });
    await index.rebuild(async (sink) => {
      await sink.upsert([device('k1'), device('k2')]);
      return 2;
    });
    expect(await snapshots.take()).toMatchObject({ written: true, documents: 2 });
    expect((await readSearchSnapshot(file))?.header.positions).toEqual({ [SHARD]: '7' });
  });

  it('writes the full text of an index loaded from a snapshot without it once it is built, though nothing else changed', async () => {
    stream();
    const { strings, documents, text } = await contentsOf([device('k1'), device('k2', 'Paris')]);
    const poller = new DynamoDbStreamPoller(new DynamoDBStreamsClient({ region: 'us-east-1' }), [STREAM], async () => undefined);
    await poller.resumeAfter(new Map([[SHARD, '7']]));
    const loadedFrom = async (offered: boolean) => {
      const index = new SwappableSearchIndex(() => new EmbeddedSearchIndex());
      let withText = false;
      await index.rebuild(async (sink) => {
        withText = await sink.adoptEncoded(strings, documents, offered ? Buffer.concat(text ?? []) : undefined);
        return documents.length;
      });
      // As the runtime does, some time after the load: the full text of a small index is built by then.
      await new Promise((resolve) => setImmediate(resolve));
      const loaded = { positions: poller.shardPositions(), withText };
      return new SearchSnapshots({ index, poller, streamArns: [STREAM], file, log: () => undefined, loaded });
    };

    // Loaded with its full text: nothing to write until the index moves on.
    expect(await (await loadedFrom(true)).take()).toEqual({ written: false, why: 'unchanged' });
    // A version 2 snapshot (or one taken while the full text was being built): the text is built after the load, and
    // then written, or every start would build it again.
    const snapshots = await loadedFrom(false);
    expect(await snapshots.take()).toMatchObject({ written: true, documents: 2, withText: true });
    expect((await readSearchSnapshot(file))?.text).toBeDefined();
    expect(await snapshots.take()).toEqual({ written: false, why: 'unchanged' });
  });
});
