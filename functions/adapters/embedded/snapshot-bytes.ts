/**
 * Bytes of the embedded engine's encoded documents and snapshot sections: unsigned LEB128 varints (the integers, up to
 * 2^53 − 1) and UTF-8 strings prefixed with their byte length, written into a growing buffer taken in chunks, and read
 * back with a bounds check on every read.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * A growing byte buffer; `take` hands over what was written so far and starts again. The document codec's writer
 * (document-codec.ts) is one, with its own kinds of values.
 */
export class ByteWriter {
  protected bytes: Uint8Array;
  protected length = 0;

  /** `initialBytes`: the buffer's first capacity (it grows by doubling). */
  constructor(initialBytes = 64 * 1024) {
    this.bytes = new Uint8Array(initialBytes);
  }

  /** Bytes written since the last `take` or `reset`. */
  get size(): number {
    return this.length;
  }

  /** Appends one byte (0 to 255). */
  byte(value: number): void {
    this.reserve(1);
    this.bytes[this.length++] = value;
  }

  /** Appends `value` (a non-negative safe integer) as an unsigned LEB128 varint. */
  varint(value: number): void {
    this.reserve(8);
    let rest = value;
    while (rest >= 0x80) {
      this.bytes[this.length++] = (rest % 0x80) | 0x80;
      rest = Math.floor(rest / 0x80);
    }
    this.bytes[this.length++] = rest;
  }

  /**
   * Appends `bytes` as they are.
   * @throws TypeError when `bytes` is not a Uint8Array (a Uint8Array's `set` would take any array-like).
   */
  raw(bytes: Uint8Array): void {
    if (!(bytes instanceof Uint8Array)) throw new TypeError('Only bytes can be written as they are.');
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** Appends `text` as its UTF-8 byte length (a varint) and the bytes (a lone surrogate becomes U+FFFD). */
  text(text: string): void {
    // A UTF-16 code unit takes at most 3 UTF-8 bytes; the bytes are written past the longest length, then moved.
    const most = text.length * 3;
    this.reserve(8 + most);
    const scratch = this.length + 5;
    const { written } = encoder.encodeInto(text, this.bytes.subarray(scratch, scratch + most));
    this.varint(written);
    this.bytes.copyWithin(this.length, scratch, scratch + written);
    this.length += written;
  }

  /** The bytes written since the last `take` or `reset` (a copy the writer no longer touches); starts again. */
  take(): Uint8Array {
    const chunk = this.bytes.slice(0, this.length);
    this.length = 0;
    return chunk;
  }

  /** Drops what was written since the last `take` or `reset`. */
  reset(): void {
    this.length = 0;
  }

  /** Makes room for `count` more bytes. */
  protected reserve(count: number): void {
    if (this.length + count <= this.bytes.length) return;
    let size = this.bytes.length * 2;
    while (size < this.length + count) size *= 2;
    const larger = new Uint8Array(size);
    larger.set(this.bytes.subarray(0, this.length));
    this.bytes = larger;
  }
}

/** Reads what a ByteWriter wrote. Every read throws RangeError past the end or on a malformed value. */
export class ByteReader {
  private position = 0;

  constructor(private readonly bytes: Uint8Array) {}

  /** Whether every byte has been read. */
  get done(): boolean {
    return this.position === this.bytes.length;
  }

  /**
   * The next unsigned LEB128 varint.
   * @throws RangeError when it is cut short or exceeds 2^53 − 1.
   */
  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (this.position >= this.bytes.length) throw new RangeError('A number is cut short (truncated).');
      const byte = this.bytes[this.position++] as number;
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) break;
      scale *= 0x80;
      if (scale > 2 ** 49) throw new RangeError('A number is too large.');
    }
    return value;
  }

  /**
   * The next string written by ByteWriter.text.
   * @throws RangeError when it is cut short; TypeError when its bytes are not UTF-8.
   */
  text(): string {
    const length = this.varint();
    if (this.position + length > this.bytes.length) throw new RangeError('A string is cut short (truncated).');
    const text = decoder.decode(this.bytes.subarray(this.position, this.position + length));
    this.position += length;
    return text;
  }
}
