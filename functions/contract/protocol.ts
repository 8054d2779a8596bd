/**
 * Protocol facts the contract states and the platform enforces: the accepted token algorithms, the longest
 * `Idempotency-Key` and how long its answer is kept, and the shape of a multipart file part. Plain values and types,
 * so that the contract depends on nothing of the platform.
 */

/** Asymmetric algorithms accepted (docs/contract.md): `alg: none` and HMAC are always rejected. */
export const ACCEPTED_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];

/** Longest accepted `Idempotency-Key`, characters (the OpenAPI document says the same). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** How long the service keeps an `Idempotency-Key`'s answer, seconds (24 h); a later request with the key executes anew. */
export const IDEMPOTENCY_KEY_RETENTION_SECONDS = 24 * 60 * 60;

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
