/**
 * How the embedded search engine keeps its documents: each one as a few hundred bytes rather than kilobytes of
 * JavaScript objects. A device document of the demo fleet is about 3 KB of JSON and 5 KB of heap as objects; a fleet's
 * documents share their keys, enumeration values and most texts (labels, descriptions, messages), so each is encoded
 * as a compact binary form of its JSON value in which every string the index's first documents contained is a code
 * into one shared table. Filters, sorts, counts and full text never read these bytes (they have their own
 * structures); only a page of results, a value count's label and a document's removal decode them (microseconds).
 *
 * The form, one tag byte per value: an object (entry count, then key and value per entry), an array (length, then its
 * items), a string of the table (its code), any other string (its UTF-8 length and bytes; one with a lone surrogate
 * as its JSON text), an integer (zig-zag
 * varint), any other number (float64, little-endian), true, false, null. Counts, lengths and codes are LEB128
 * varints. What decode returns is what `JSON.parse(JSON.stringify(document))` would: the same keys in the same order,
 * so a response serializes to the same bytes.
 */
import type { SearchDocument } from '../../core/search/documents.js';
import { ByteWriter } from './snapshot-bytes.js';

/** How many strings the shared table holds at most. */
export const TABLE_MAX_STRINGS = 16_384;
/** Strings longer than this (UTF-16 code units) never enter the table. */
const TABLE_MAX_LENGTH = 256;
/** How many of the first documents the table is made of. */
const TABLE_DOCUMENTS = 64;

enum Tag {
  Object = 0,
  Array = 1,
  TableString = 2,
  String = 3,
  Integer = 4,
  Float = 5,
  True = 6,
  False = 7,
  Null = 8,
  /** A string that is not well-formed UTF-16 (a lone surrogate), kept as its JSON text, which escapes it. */
  EscapedString = 9,
  /** An ISO-8601 instant as `toISOString` writes it (`2026-12-06T10:00:00.000Z`): its epoch milliseconds, zig-zag. */
  Instant = 10,
  /** A string that starts with the document's `id` (a hub's or peripheral's uid): what follows the id, as a string. */
  IdSuffix = 11,
}

/** What Date.prototype.toISOString writes for years 0000 to 9999. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Whether `value` holds a lone surrogate (not well-formed UTF-16, which UTF-8 cannot carry). */
function hasLoneSurrogate(value: string): boolean {
  return /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(value);
}

const decoder = new TextDecoder();

/** The encoder's buffer: a ByteWriter with the codec's signed integers and floats. */
class Writer extends ByteWriter {
  constructor() {
    super(4096);
  }

  /** A safe integer, zig-zag (0, -1, 1, -2… as 0, 1, 2, 3…), as a varint. */
  signed(value: number): void {
    this.varint(value >= 0 ? value * 2 : -value * 2 - 1);
  }

  float(value: number): void {
    this.reserve(8);
    new DataView(this.bytes.buffer).setFloat64(this.length, value, true);
    this.length += 8;
  }
}

/** Reads the encoded form back. */
class Reader {
  position = 0;
  /** The document's `id`, once read (IdSuffix strings follow it). */
  private id = '';
  /** Whether the document itself (the outermost object) was begun. */
  private begun = false;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly table: readonly string[],
    private readonly frozen: boolean,
  ) {}

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.bytes[this.position++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }

  /** A zig-zag varint (Writer.signed). */
  private signed(): number {
    const zigzag = this.varint();
    return zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
  }

  /** A string written as its UTF-8 length and bytes. */
  private utf8(): string {
    const length = this.varint();
    const text = decoder.decode(this.bytes.subarray(this.position, this.position + length));
    this.position += length;
    return text;
  }

  /** An object's entries, after its tag; the outermost one's `id` is kept for the IdSuffix strings after it. */
  private object(): Readonly<Record<string, unknown>> {
    const top = !this.begun;
    this.begun = true;
    const count = this.varint();
    const object: Record<string, unknown> = {};
    for (let index = 0; index < count; index += 1) {
      const key = this.value() as string;
      const value = this.value();
      if (top && key === 'id' && typeof value === 'string') this.id = value;
      // As JSON.parse does: `__proto__` is an own property, never the prototype.
      if (key === '__proto__') Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
      else object[key] = value;
    }
    return this.frozen ? Object.freeze(object) : object;
  }

  value(): unknown {
    const tag = this.bytes[this.position++] as Tag;
    switch (tag) {
      case Tag.Object:
        return this.object();
      case Tag.Array: {
        const length = this.varint();
        const array: unknown[] = new Array(length);
        for (let index = 0; index < length; index += 1) array[index] = this.value();
        return this.frozen ? Object.freeze(array) : array;
      }
      case Tag.TableString:
        return this.table[this.varint()];
      case Tag.String:
        return this.utf8();
      case Tag.Integer: {
        return this.signed();
      }
      case Tag.Float: {
        const value = new DataView(this.bytes.buffer, this.bytes.byteOffset).getFloat64(this.position, true);
        this.position += 8;
        return value;
      }
      case Tag.EscapedString:
        return JSON.parse(this.utf8()) as string;
      case Tag.Instant: {
        return new Date(this.signed()).toISOString();
      }
      case Tag.IdSuffix:
        return this.id + (this.value() as string);
      case Tag.True:
        return true;
      case Tag.False:
        return false;
      case Tag.Null:
        return null;
      default:
        throw new Error(`Not an encoded document: tag ${String(tag)} at byte ${this.position - 1}.`);
    }
  }
}

/**
 * Encodes and decodes the documents of one index. The string table is made of the first documents encoded (every
 * string, key or value, of up to TABLE_DOCUMENTS of them, at most TABLE_MAX_STRINGS), fixed from then on; an index
 * loaded from a snapshot takes the snapshot's (`withTable`).
 */
export class DocumentCodec {
  private table: string[] | undefined;
  /** The `id` of the document being encoded. */
  private id = '';
  private codeOf = new Map<string, number>();
  private readonly writer = new Writer();

  /** A codec bound to `table` (a snapshot's: the `strings` of the codec that wrote it). */
  static withTable(table: readonly string[]): DocumentCodec {
    const codec = new DocumentCodec();
    codec.fix([...table]);
    return codec;
  }

  /** The string table in use (empty before the first document). */
  get strings(): readonly string[] {
    return this.table ?? [];
  }

  /** Fixes the string table from `documents` (the first ones the index is given) when none is fixed yet. */
  prime(documents: readonly SearchDocument[]): void {
    if (this.table !== undefined || documents.length === 0) return;
    const seen = new Set<string>();
    let id = '';
    const collect = (value: unknown): void => {
      if (seen.size >= TABLE_MAX_STRINGS) return;
      if (typeof value === 'string') {
        // What follows the id is what the other documents share (`-hub1-scanner`), not the id.
        const text = id !== '' && value.length > id.length && value.startsWith(id) ? value.slice(id.length) : value;
        if (text.length <= TABLE_MAX_LENGTH && !ISO_INSTANT.test(text)) seen.add(text);
      } else if (Array.isArray(value)) {
        for (const item of value) collect(item);
      } else if (typeof value === 'object' && value !== null) {
        for (const [key, item] of Object.entries(value)) {
          collect(key);
          collect(item);
        }
      }
    };
    for (const document of documents.slice(0, TABLE_DOCUMENTS)) {
      id = '';
      const plain = JSON.parse(JSON.stringify(document)) as Record<string, unknown>;
      collect(plain.id);
      id = typeof plain.id === 'string' ? plain.id : '';
      collect(plain);
    }
    this.fix([...seen]);
  }

  /** `document` encoded (the table fixed from it when none is yet): what JSON.stringify would keep of it. */
  encode(document: SearchDocument): Uint8Array {
    this.prime([document]);
    const writer = this.writer;
    writer.reset();
    this.id = '';
    this.write(document, writer, true);
    return writer.take();
  }

  /**
   * The document `bytes` encode, deeply frozen (a write to it throws TypeError) unless `frozen` is false: equal to
   * `JSON.parse(JSON.stringify(document))`, keys in the same order. Freezing is ~40 % of the time; leave it out only for
   * a document nothing outside the engine sees.
   * @throws Error when `bytes` were not written by a codec with this table.
   */
  decode(bytes: Uint8Array, frozen = true): SearchDocument {
    return new Reader(bytes, this.strings, frozen).value() as SearchDocument;
  }

  private fix(table: string[]): void {
    this.table = table;
    this.codeOf = new Map(table.map((text, code) => [text, code]));
  }

  private string(value: string, writer: Writer, key = false): void {
    const code = this.codeOf.get(value);
    if (code === undefined && !key && ISO_INSTANT.test(value)) {
      const milliseconds = Date.parse(value);
      if (Number.isSafeInteger(milliseconds) && new Date(milliseconds).toISOString() === value) {
        writer.byte(Tag.Instant);
        writer.signed(milliseconds);
        return;
      }
    }
    // The id itself is written once, at the top, as it is; `id` stays empty until then.
    if (code === undefined && !key && this.id !== '' && value.length > this.id.length && value.startsWith(this.id)) {
      writer.byte(Tag.IdSuffix);
      this.string(value.slice(this.id.length), writer, true);
      return;
    }
    if (code === undefined && hasLoneSurrogate(value)) {
      writer.byte(Tag.EscapedString);
      writer.text(JSON.stringify(value));
    } else if (code === undefined) {
      writer.byte(Tag.String);
      writer.text(value);
    } else {
      writer.byte(Tag.TableString);
      writer.varint(code);
    }
  }

  /**
   * Writes `value` as JSON.stringify sees it (toJSON applied, undefined and functions left out of objects). `top`: the
   * document itself, whose `id` entry, once written, lets the strings after it that start with it be IdSuffix.
   */
  private write(raw: unknown, writer: Writer, top = false): void {
    const value =
      typeof raw === 'object' && raw !== null && typeof (raw as { toJSON?: unknown }).toJSON === 'function'
        ? (raw as { toJSON: () => unknown }).toJSON()
        : raw;
    if (typeof value === 'string') this.string(value, writer);
    else if (typeof value === 'number') {
      if (!Number.isFinite(value)) writer.byte(Tag.Null);
      else if (Number.isSafeInteger(value)) {
        // -0 too: zig-zag makes it 0, as JSON writes it.
        writer.byte(Tag.Integer);
        writer.signed(value);
      } else {
        writer.byte(Tag.Float);
        writer.float(value);
      }
    } else if (typeof value === 'boolean') writer.byte(value ? Tag.True : Tag.False);
    else if (value === null || value === undefined || typeof value === 'function' || typeof value === 'symbol') writer.byte(Tag.Null);
    else if (typeof value === 'bigint') throw new TypeError('A BigInt cannot be stored in a search document (JSON has none).');
    else if (Array.isArray(value)) {
      writer.byte(Tag.Array);
      writer.varint(value.length);
      for (const item of value) this.write(item, writer);
    } else {
      const entries = Object.entries(value as object).filter(
        ([, item]) => item !== undefined && typeof item !== 'function' && typeof item !== 'symbol',
      );
      writer.byte(Tag.Object);
      writer.varint(entries.length);
      for (const [key, item] of entries) {
        this.string(key, writer, true);
        this.write(item, writer);
        if (top && key === 'id' && typeof item === 'string') this.id = item;
      }
    }
  }
}
