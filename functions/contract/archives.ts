/** Where archives live in the archive bucket: the key patterns the route and event definitions grant. */
import { withThousandsSeparators } from '../core/shared/thousands.js';

/** Key prefix of presigned uploads, until the validation function has run. */
export const UPLOAD_PREFIX = 'uploads/';
/** Presigned uploads (object key pattern). */
export const UPLOADED_ARCHIVES = `${UPLOAD_PREFIX}*`;
/** Stored archives: `companies/<company>/…`, one immutable object per scenario version (object key pattern). */
export const STORED_ARCHIVES = 'companies/*';

/**
 * Largest archive a direct upload (`POST {scenario_upload_url}/…/resources/scenarios`) accepts, bytes (4 MiB). Lambda
 * receives at most 6 MB per synchronous invocation and API Gateway base64-encodes binary bodies (×4/3), which leaves
 * about 4.4 MB for an archive and its multipart framing. Larger archives go through a presigned upload slot.
 */
export const MAX_DIRECT_UPLOAD_BYTES = 4 * 1024 * 1024;

/** MAX_DIRECT_UPLOAD_BYTES as the 413 and docs/contract.md state it: `4 MiB (4,194,304 bytes)`. */
export const DIRECT_UPLOAD_LIMIT_TEXT = `${MAX_DIRECT_UPLOAD_BYTES / 1024 ** 2} MiB (${withThousandsSeparators(MAX_DIRECT_UPLOAD_BYTES)} bytes)`;
