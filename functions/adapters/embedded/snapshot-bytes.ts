/**
 * Bytes of the embedded engine's snapshot sections: unsigned LEB128 varints (the integers, up to 2^53 − 1) and UTF-8
 * strings prefixed with their byte length, written into a growing buffer taken in chunks, and read back with a
 * bounds check on every read.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

/** A growing byte buffer; `take` hands over what was written so far and starts a new chunk. */
export class ByteWriter {
  private bytes: Uint8Array;
  private length = 0;

  /** `initialBytes`: the first chunk's capacity (it grows by doubling). */
  constructor(initialBytes = 64 * 1024) {
    this.bytes = new Uint8Array(initialBytes);
  }

  /** Bytes written since the last `take`. */
  get size(): number {
    return this.length;
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

  /** Appends `text` as its UTF-8 byte length (a varint) and the bytes. */
  text(text: string): void {
    const utf8 = encoder.encode(text);
    this.varint(utf8.length);
    this.reserve(utf8.length);
    this.bytes.set(utf8, this.length);
    this.length += utf8.length;
  }

  /** The bytes written since the last `take` (a copy the writer no longer touches). */
  take(): Uint8Array {
    const chunk = this.bytes.slice(0, this.length);
    this.length = 0;
    return chunk;
  }

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.bytes.length) return;
    const larger = new Uint8Array(Math.max(this.bytes.length * 2, this.length + bytes));
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
