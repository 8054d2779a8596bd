/**
 * Cross-origin access for browsers (the Fetch standard's CORS protocol): what the upload and authentication addresses
 * answer to the operator console, whose page comes from the main address (another origin). The same values drive API
 * Gateway's CORS configuration on AWS (lib/constructs/http-apis.ts) and the local gateway (functions/local/http-gateway.ts).
 */

/** Methods a cross-origin request may use. */
export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

/** Request headers a cross-origin request may carry besides the CORS-safelisted ones. */
export const CORS_ALLOWED_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'if-none-match'] as const;

/** Response headers a cross-origin caller may read besides the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = ['location', 'retry-after', 'www-authenticate', 'idempotent-replayed', 'etag'] as const;

/** How long a browser may keep a preflight's answer, seconds (Chromium caps it at 7,200). */
export const CORS_MAX_AGE_SECONDS = 3600;
