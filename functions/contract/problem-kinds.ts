/**
 * The HTTP face of each kind of domain error, as the contract states it: the status and title every problem body of
 * that kind carries (RFC 9457), and the longest `errors` list a body holds. Plain data: the OpenAPI document's problem
 * schemas (schemas/problems.ts) and the platform's error middleware (platform/problem.ts) both read it, so the
 * document and the answers cannot drift.
 */
import type { DomainErrorKind } from '../core/shared/errors.js';

/** The status and title of each kind of domain error but OAuth refusals (whose status depends on the refusal). */
export const PROBLEM_KINDS: Readonly<Record<Exclude<DomainErrorKind, 'oauth'>, { status: number; title: string }>> = {
  'bad-request': { status: 400, title: 'Bad Request' },
  unauthorized: { status: 401, title: 'Unauthorized' },
  'new-password-required': { status: 401, title: 'New Password Required' },
  forbidden: { status: 403, title: 'Forbidden' },
  'not-found': { status: 404, title: 'Not Found' },
  conflict: { status: 409, title: 'Conflict' },
  'upload-not-completed': { status: 410, title: 'Upload Not Completed' },
  'quota-exceeded': { status: 413, title: 'Storage Quota Exceeded' },
  'payload-too-large': { status: 413, title: 'Payload Too Large' },
  'unsupported-media-type': { status: 415, title: 'Unsupported Media Type' },
  'invalid-archive': { status: 422, title: 'Invalid Scenario Archive' },
  'unprocessable-request': { status: 422, title: 'Unprocessable Request' },
  'too-many-requests': { status: 429, title: 'Too Many Requests' },
  'service-unavailable': { status: 503, title: 'Service Unavailable' },
};

/** Titles of the statuses an OAuth refusal answers with (RFC 6749 §5.2 errors, and retry-later answers). */
export const OAUTH_TITLES: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

/**
 * Most `errors` entries a problem body carries: a request with thousands of bad parameters (or an archive with
 * thousands of bad entries) gets the first ones, `errorCount` with the total and a detail saying the rest were omitted.
 */
export const MAX_PROBLEM_ERRORS = 20;

/** The problem `type` URI of a title: a stable, documented identifier per kind. */
export function problemTypeOf(title: string): string {
  return `https://device-scenario-service.dev/problems/${title.toLowerCase().replaceAll(' ', '-')}`;
}
