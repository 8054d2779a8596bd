import { createHmac, timingSafeEqual } from 'node:crypto';
import { MIN_CURSOR_KEY_BYTES } from '../../contract/environment.js';
import { BadRequestError } from '../../core/shared/errors.js';

/** Bytes of HMAC-SHA256 kept in a cursor: 128 bits (RFC 2104 allows truncating to half the hash), 22 characters. */
const SIGNATURE_BYTES = 16;

/** Shortest accepted signing key, bytes (declared with CURSOR_SIGNING_KEY, which is checked against it at cold start). */
export { MIN_CURSOR_KEY_BYTES };

/** Longest cursor decoded; anything longer was not issued here (cursors hold one key of a few identifiers). */
const MAX_CURSOR_LENGTH = 2048;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

/**
 * The `listing` a cursor is bound to: the listing's name, the company and every filter of the query, in a fixed
 * order (`undefined` filters as null). JSON, so that no value can shift into another position.
 */
export function cursorListing(name: string, companyId: string, ...filters: (string | number | undefined)[]): string {
  return JSON.stringify([name, companyId, ...filters.map((filter) => filter ?? null)]);
}

/** The one 400 for every cursor this service did not issue for the listing at hand. */
export function invalidCursor(message = 'unknown, altered or issued for another listing'): BadRequestError {
  return new BadRequestError(
    "'cursor' is not a cursor this listing issued. Pass the 'nextCursor' of the previous page unchanged, with the same " +
      'filters, or start over without cursor.',
    [{ path: 'cursor', message }],
  );
}

/**
 * The one codec of every paged listing's continuation cursor: `base64url(JSON key) + '.' + base64url(first 16 bytes
 * of HMAC-SHA256(secret, listing + '\n' + payload))`. The listing (cursorListing: name, company, filters) is signed
 * but not carried, so a cursor is accepted only by the listing, company and filters that issued it, and a client can
 * neither forge nor alter one. The key is read on first use, once (the functions that never page need no key).
 */
export class CursorCodec {
  private key: Buffer | undefined;

  /**
   * @param keySource returns the secret (at least MIN_CURSOR_KEY_BYTES bytes); called once, on the first encode or
   *   decode. It throws (naming the missing variable) when the key is not configured.
   */
  constructor(private readonly keySource: () => Buffer) {}

  /**
   * Reads the key now instead of on the first cursor: a function that pages calls it at cold start, so that a missing
   * key fails its initialization rather than the first request with a next page.
   * @throws Error when the key source does (naming the missing variable) or the key is shorter than 32 bytes.
   */
  load(): Buffer {
    if (this.key === undefined) {
      const key = this.keySource();
      if (key.length < MIN_CURSOR_KEY_BYTES)
        throw new Error(`The cursor signing key must be at least ${MIN_CURSOR_KEY_BYTES} bytes; got ${key.length}.`);
      this.key = key;
    }
    return this.key;
  }

  private signature(listing: string, payload: string): Buffer {
    return createHmac('sha256', this.load()).update(`${listing}\n${payload}`).digest().subarray(0, SIGNATURE_BYTES);
  }

  /** The cursor continuing `listing` after `key` (an object of DynamoDB key attributes, or less when derivable). */
  encode(listing: string, key: Record<string, unknown>): string {
    const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
    return `${payload}.${this.signature(listing, payload).toString('base64url')}`;
  }

  /**
   * The key `encode(listing, key)` carried.
   * @throws BadRequestError (400, `errors: [{ path: 'cursor' }]`) when the cursor is malformed, altered, signed with
   *   another key or issued for another listing (name, company or filters).
   */
  decode(listing: string, cursor: string): Record<string, unknown> {
    const parts = cursor.length > MAX_CURSOR_LENGTH ? [] : cursor.split('.');
    const [payload, signature] = parts;
    if (parts.length !== 2 || payload === undefined || signature === undefined || !BASE64URL.test(payload) || !BASE64URL.test(signature)) {
      throw invalidCursor();
    }
    // Compared as text: base64url's last character carries spare bits, so comparing decoded bytes would accept a
    // cursor whose last character was changed.
    const given = Buffer.from(signature);
    const expected = Buffer.from(this.signature(listing, payload).toString('base64url'));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor();
    let key: unknown;
    try {
      key = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    } catch {
      throw invalidCursor();
    }
    if (key === null || typeof key !== 'object' || Array.isArray(key)) throw invalidCursor();
    return key as Record<string, unknown>;
  }
}
