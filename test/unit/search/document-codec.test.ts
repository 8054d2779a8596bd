/**
 * The embedded engine's document codec (functions/adapters/embedded/document-codec.ts): what it decodes is what the
 * JSON round trip of the document gives, byte for byte once serialized, for the demo fleet's documents and for the
 * values JSON treats specially; and it keeps a fleet's documents in a fraction of their JSON.
 */
import { describe, expect, it } from 'vitest';
import { searchDocumentFromItem } from '../../../functions/adapters/aws/search-documents.js';
import { DocumentCodec, TABLE_MAX_STRINGS } from '../../../functions/adapters/embedded/document-codec.js';
import type { SearchDocument } from '../../../functions/core/search/documents.js';
import { DEMO_COMPANIES } from '../../../functions/local/demo-data.js';
import { generateDemoDevices } from '../../../functions/local/demo-fleet.js';

const fleet = (): SearchDocument[] =>
  generateDemoDevices(DEMO_COMPANIES[0] as (typeof DEMO_COMPANIES)[number], 300, 7).map(
    (device) => searchDocumentFromItem({ ...device, deviceId: device.id, entity: 'DEVICE' }) as SearchDocument,
  );

describe('the embedded engine’s document codec', () => {
  it('decodes every document of a fleet to its JSON round trip, same keys in the same order, frozen', () => {
    const documents = fleet();
    const codec = new DocumentCodec();
    codec.prime(documents.slice(0, 10));
    for (const document of documents) {
      const decoded = codec.decode(codec.encode(document));
      expect(JSON.stringify(decoded)).toBe(JSON.stringify(document));
      expect(Object.isFrozen(decoded)).toBe(true);
      expect(() => {
        (decoded as { id: string }).id = 'changed';
      }).toThrow(TypeError);
    }
  });

  it('keeps a fleet’s documents in under a quarter of their JSON', () => {
    const documents = fleet();
    const codec = new DocumentCodec();
    codec.prime(documents);
    const json = documents.reduce((sum, document) => sum + Buffer.byteLength(JSON.stringify(document)), 0);
    const encoded = documents.reduce((sum, document) => sum + codec.encode(document).length, 0);
    expect(encoded / json).toBeLessThan(0.25);
  });

  it('treats the values JSON treats specially as JSON does', () => {
    const odd = {
      type: 'DEVICE',
      id: 'odd',
      company: 'acme',
      text: 'Café ☕ 𝄞 "quoted" \\ back\nslash',
      lone: 'a\ud800b',
      numbers: [0, -0, 1, -1, 2 ** 31, -(2 ** 40), Number.MAX_SAFE_INTEGER, 2 ** 60, 0.1, -1.5e-300, Number.NaN, Number.POSITIVE_INFINITY],
      nested: { empty: {}, list: [], deep: [[{ a: null, b: true, c: false }]] },
      skipped: undefined,
      holes: [undefined, () => 1],
      when: new Date('2026-12-06T10:00:00.000Z'),
      ['__proto__']: { polluted: true },
    } as unknown as SearchDocument;
    Object.defineProperty(odd, '__proto__', { value: { polluted: true }, enumerable: true });
    const codec = new DocumentCodec();
    const decoded = codec.decode(codec.encode(odd));
    expect(JSON.stringify(decoded)).toBe(JSON.stringify(odd));
    expect(decoded).toEqual(JSON.parse(JSON.stringify(odd)));
    expect(Object.getPrototypeOf(decoded)).toBe(Object.prototype);
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('reads what another codec with the same table wrote (a snapshot), and caps its table', () => {
    const documents = fleet();
    const writer = new DocumentCodec();
    writer.prime(documents);
    const reader = DocumentCodec.withTable(writer.strings);
    const bytes = writer.encode(documents[5] as SearchDocument);
    expect(JSON.stringify(reader.decode(bytes))).toBe(JSON.stringify(documents[5]));
    expect(writer.strings.length).toBeLessThanOrEqual(TABLE_MAX_STRINGS);
    expect(() => new DocumentCodec().decode(new Uint8Array([42]))).toThrow(/Not an encoded document/);
  });
});
