/** Where archives live in the archive bucket: the key patterns the route and event definitions grant. */

/** Key prefix of presigned uploads, until the validation function has run. */
export const UPLOAD_PREFIX = 'uploads/';
/** Presigned uploads (object key pattern). */
export const UPLOADED_ARCHIVES = `${UPLOAD_PREFIX}*`;
/** Stored archives: `companies/<company>/…`, one immutable object per scenario version (object key pattern). */
export const STORED_ARCHIVES = 'companies/*';
