/**
 * Protocol facts the contract states and the platform enforces: the accepted token algorithms, the longest
 * `Idempotency-Key`, and the shape of a multipart file part. Plain values and types, so that the contract depends on
 * nothing of the platform.
 */

/** Asymmetric algorithms accepted (docs/contract.md): `alg: none` and HMAC are always rejected. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];

/** Longest accepted `Idempotency-Key`, characters (the OpenAPI document says the same). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** One file part of a multipart/form-data body. */
export interface FilePart {
  /** `filename` of the part's Content-Disposition. */
  filename?: string;
  /** The part's Content-Type. */
  mimetype: string;
  /** The part's Content-Transfer-Encoding. */
  encoding: string;
  /** The part's bytes, at most MultipartLimits.fileBytes of them. */
  content: Buffer;
  /** Whether the part was longer than MultipartLimits.fileBytes (then `content` holds only its beginning). */
  truncated: boolean;
}
