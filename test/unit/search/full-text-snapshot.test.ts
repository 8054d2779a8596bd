/**
 * The embedded engine's full text in a snapshot (FullTextIndex.snapshot, EmbeddedSearchIndex.adoptEncoded with
 * `text`): an index loaded with it answers every `global` search as the index that wrote it, at once and after more
 * writes, with documents left out by the load taken out of it; a full text of another version, one another tokenizer
 * split, or a damaged one is not used (the text is built from the documents instead), and taking it after the index changed throws.
 */
import { describe, expect, it } from 'vitest';
import { searchDocumentFromItem } from '../../../functions/adapters/aws/search-documents.js';
import { EmbeddedSearchIndex } from '../../../functions/adapters/embedded/search-engine.js';
import { ByteReader, ByteWriter } from '../../../functions/adapters/embedded/snapshot-bytes.js';
import { documentKeyString, type SearchDocument } from '../../../functions/core/search/documents.js';
import type { SearchQuery } from '../../../functions/core/search/query.js';
import { generateDemoDevices } from '../../../functions/local/demo-fleet.js';

const fleet: SearchDocument[] = generateDemoDevices({ id: 'acme', prefix: 'ACM' }, 400, 7).map(
  (device) => searchDocumentFromItem({ ...device, deviceId: device.id, entity: 'DEVICE' }) as SearchDocument,
);

/** Queries of every kind of term: exact words, prefixes, fuzzy words, serials, several words, nothing. */
const QUERIES = ['printer', 'lyo', 'amsterdm', 'ACM-000012', 'payment terminal', 'scenario player', 'kiosk', 'xyzzy', 'a'];

function query(global: string, sort: SearchQuery['sort'] = { field: 'relevance', direction: 'DESC' }): SearchQuery {
  return { companies: ['acme'], filters: new Map(), global, sort, page: 1, pageSize: 1000 } as SearchQuery;
}

/** What each query answers: the ids in relevance order (scores decide it, the key breaks ties) and the total. */
async function answers(index: EmbeddedSearchIndex): Promise<Record<string, string>> {
  const found: Record<string, string> = {};
  for (const text of QUERIES) {
    const result = await index.search(query(text));
    found[text] = `${result.total}: ${result.resources.map((document) => document.id).join(' ')}`;
  }
  return found;
}

/** A snapshot of `index` as the runtime takes it: the documents, the table and the full text joined. */
function snapshotOf(index: EmbeddedSearchIndex): { strings: readonly string[]; documents: readonly Uint8Array[]; text: Uint8Array } {
  const contents = index.snapshotContents();
  const chunks = [...(contents.text ?? [])];
  return { strings: contents.strings, documents: contents.documents, text: Buffer.concat(chunks) };
}

/** An index written with holes in its slots: documents removed, others replaced, a word repeated 70 times. */
async function writtenIndex(): Promise<EmbeddedSearchIndex> {
  const index = new EmbeddedSearchIndex();
  await index.upsert(fleet);
  await index.remove(fleet.filter((_, n) => n % 7 === 3).map((document) => document));
  await index.upsert(
    fleet.filter((_, n) => n % 11 === 5).map((document) => ({ ...document, description: `${'beacon '.repeat(70)}renamed` })),
  );
  return index;
}

describe('the full text in a snapshot', () => {
  it('answers every global search as the index that wrote it, at once, and after more writes to both', async () => {
    const writer = await writtenIndex();
    const { strings, documents, text } = snapshotOf(writer);
    const loaded = new EmbeddedSearchIndex();

    expect(loaded.adoptEncoded(strings, documents, undefined, text)).toBe(true);

    expect(loaded.textComplete).toBe(true);
    expect(await answers(loaded)).toEqual(await answers(writer));
    // Repeated 70 times: more than a posting holds itself, kept exactly.
    expect((await loaded.search(query('beacon'))).total).toBe(fleet.filter((_, n) => n % 11 === 5).length);
    const more = [
      { ...(fleet[3] as SearchDocument), description: 'printer beacon' },
      { ...(fleet[8] as SearchDocument), location: { name: 'Lobby kiosk' } } as SearchDocument,
    ];
    for (const index of [writer, loaded]) {
      await index.upsert(more);
      await index.remove([fleet[10] as SearchDocument, fleet[11] as SearchDocument]);
    }
    expect(await answers(loaded)).toEqual(await answers(writer));
    // And once more through a snapshot of the loaded index, whose slots are the writer's positions.
    const again = new EmbeddedSearchIndex();
    const second = snapshotOf(loaded);
    expect(again.adoptEncoded(second.strings, second.documents, undefined, second.text)).toBe(true);
    expect(await answers(again)).toEqual(await answers(writer));
  });

  it('leaves out the documents the load skips, and gives their slots to later writes', async () => {
    const writer = await writtenIndex();
    const { strings, documents, text } = snapshotOf(writer);
    const skipped = new Set(fleet.filter((_, n) => n % 5 === 1).map(documentKeyString));
    const loaded = new EmbeddedSearchIndex();

    expect(loaded.adoptEncoded(strings, documents, (key) => skipped.has(key), text)).toBe(true);
    await writer.remove(fleet.filter((_, n) => n % 5 === 1));
    expect(await answers(loaded)).toEqual(await answers(writer));

    const back = fleet
      .filter((_, n) => n % 5 === 1)
      .map((document) => ({ ...document, location: { name: 'Returned printer' } }) as SearchDocument);
    await writer.upsert(back);
    await loaded.upsert(back);
    expect(await answers(loaded)).toEqual(await answers(writer));
  });

  it('is not used when it is of another version or tokenizer, or damaged: the text is built from the documents', async () => {
    const writer = await writtenIndex();
    const { strings, documents, text } = snapshotOf(writer);
    const otherVersion = Uint8Array.from(text);
    otherVersion[0] = 99;
    const truncated = text.subarray(0, text.length - 3);
    const damaged = Uint8Array.from(text);
    damaged.fill(0xff, Math.floor(text.length / 2), Math.floor(text.length / 2) + 8);

    // Written by a tokenizer that split its probe text otherwise: one more word than this one finds in it.
    const header = new ByteReader(text);
    const version = header.varint();
    const probeTokens = header.text();
    const headerBytes = new ByteWriter();
    headerBytes.varint(version);
    headerBytes.text(probeTokens);
    const otherHeader = new ByteWriter();
    otherHeader.varint(version);
    otherHeader.text(`${probeTokens}\nsplit-otherwise`);
    const otherTokenizer = Buffer.concat([otherHeader.take(), text.subarray(headerBytes.take().length)]);

    for (const bad of [otherVersion, truncated, damaged, otherTokenizer]) {
      const loaded = new EmbeddedSearchIndex();
      expect(loaded.adoptEncoded(strings, documents, undefined, bad)).toBe(false);
      expect(loaded.textComplete).toBe(false);
      expect(await answers(loaded)).toEqual(await answers(writer));
    }
  });

  it('is not offered while part of the full text is still to be built, and cannot be taken once the index changed', async () => {
    const writer = await writtenIndex();
    const { strings, documents } = snapshotOf(writer);
    const pending = new EmbeddedSearchIndex();
    pending.adoptEncoded(strings, documents);
    expect(pending.snapshotContents().text).toBeUndefined();

    const contents = writer.snapshotContents();
    const chunks = (contents.text as Iterable<Uint8Array>)[Symbol.iterator]();
    await writer.upsert([{ ...(fleet[0] as SearchDocument), location: { name: 'Changed meanwhile' } } as SearchDocument]);
    expect(() => chunks.next()).toThrow(/changed while its snapshot was taken/);
  });
});

describe('snapshot bytes', () => {
  it('read back the numbers and strings written, up to 2^53 − 1, and refuse what is cut short', () => {
    const out = new ByteWriter(4);
    const numbers = [0, 1, 127, 128, 300, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER];
    for (const number of numbers) out.varint(number);
    out.text('Zürich — kiosk 🙂');
    const bytes = out.take();
    const input = new ByteReader(bytes);

    expect(numbers.map(() => input.varint())).toEqual(numbers);
    expect(input.text()).toBe('Zürich — kiosk 🙂');
    expect(input.done).toBe(true);
    expect(() => input.varint()).toThrow(RangeError);
    expect(out.size).toBe(0);
    out.text('kiosk');
    expect(() => new ByteReader(out.take().subarray(0, 4)).text()).toThrow(RangeError);
  });
});
