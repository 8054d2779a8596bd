/**
 * Responses and response headers shared by several routes. The OpenAPI generator emits each of these objects once,
 * under `components.responses` / `components.headers` (by name), and refers to it from every route that uses the
 * same object; a route that needs another description spreads one and overrides `description` (then it is inlined).
 */
import * as z from 'zod';
import type { ResponseHeader, RouteResponse } from '../route.js';
import {
  BadRequestProblem,
  ConflictProblem,
  ForbiddenProblem,
  InternalServerErrorProblem,
  InvalidArchiveProblem,
  MethodNotAllowedProblem,
  NotFoundProblem,
  RequestHeaderFieldsTooLargeProblem,
  ServiceUnavailableProblem,
  UnauthorizedProblem,
  UnsupportedMediaTypeProblem,
  UploadTooLargeProblem,
} from './problems.js';

/**
 * Why any route of the local runtime may answer 503: its admission control (functions/local/admission.ts) refuses a
 * request it has no place for within its wait bound, before reading the body or invoking anything.
 */
const LOCAL_ADMISSION_NOTE =
  'Locally also when the address is already serving and queueing as many requests as it admits (`MAX_IN_FLIGHT_*`, `MAX_QUEUED_REQUESTS`, `MAX_QUEUE_WAIT_MS`, `OVERLOAD_QUEUE_WAIT_MS`; on the auth address, `MAX_PER_SOURCE_AUTH` of one client address): the request was not processed; retry after `Retry-After` seconds.';

/** Response headers by name (the `components.headers` key). */
export const HEADERS = {
  'WWW-Authenticate': {
    description: 'Bearer challenge (RFC 6750), e.g. `Bearer error="invalid_token", error_description="..."`.',
    schema: z.string(),
    required: true,
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: z.int().min(0), required: true },
  Location: { description: 'Path of the created resource.', schema: z.string().meta({ format: 'uri-reference' }), required: true },
  'Content-Disposition': { description: 'attachment; filename="<scenario id>-<version>.zip"', schema: z.string(), required: true },
  'Cache-Control': {
    description: 'How long the answer may be cached (`no-store`, or `public, max-age=<seconds>`).',
    schema: z.string(),
    required: true,
  },
  Allow: {
    description: 'The methods the path supports on this address, comma-separated (RFC 9110), e.g. `GET`.',
    schema: z.string(),
    required: true,
  },
  'Idempotent-Replayed': {
    description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.',
    schema: z.literal('true'),
  },
} as const satisfies Record<string, ResponseHeader>;

/** Problem responses by name (the `components.responses` key). */
export const PROBLEM_RESPONSES = {
  BadRequest: {
    description: 'Bad Request: malformed request; `errors` names each offending parameter or body path.',
    schema: BadRequestProblem,
  },
  Unauthorized: {
    description:
      'Unauthorized: the bearer token is missing, malformed, expired or untrusted. On AWS, API Gateway\'s authorizer answers this itself, before any function runs, with `{"message":"Unauthorized"}` (application/json).',
    schema: UnauthorizedProblem,
    headers: { 'WWW-Authenticate': HEADERS['WWW-Authenticate'] },
  },
  Forbidden: {
    description:
      'Forbidden: the token lacks the required scope or does not grant access to the company. On AWS, a device token without the route\'s scope is answered by API Gateway\'s JWT authorizer with `{"message":"Forbidden"}` (application/json).',
    schema: ForbiddenProblem,
  },
  NotFound: { description: 'Not Found: the addressed resource does not exist for this company.', schema: NotFoundProblem },
  Conflict: {
    description: 'Conflict: this scenario version already exists; versions are immutable and nothing was changed.',
    schema: ConflictProblem,
  },
  PayloadTooLarge: {
    description:
      "Content Too Large: either storing the archive would exceed the company's storage quota (`quotaBytes`, `usedBytes`, `archiveBytes`), or the request body exceeds the upload address's limit.",
    schema: UploadTooLargeProblem,
  },
  UnprocessableArchive: {
    description:
      'Unprocessable Content: the archive is invalid or badly structured; `errors` lists every violation with its path: not a ZIP or truncated; scenario.json missing, not JSON or not valid against the schema (path `scenario.json#/<pointer>`); resources/ missing; a referenced file absent; entry names absolute, with `..`, backslashes or drive letters (central directory, Unicode Path field and local header must agree); symbolic links; encrypted entries; unsupported compression; duplicate names; more than 10,000 entries; more than 4 GiB declared uncompressed; an entry above 1 MiB with a compression ratio above 100:1; overlapping entries; CRC-32 or size mismatches. Nothing is stored and no quota is consumed.',
    schema: InvalidArchiveProblem,
  },
  InternalServerError: {
    description: 'Internal Server Error: an unexpected error, logged on the server.',
    schema: InternalServerErrorProblem,
  },
  MethodNotAllowed: {
    description:
      'Method Not Allowed (local runtime; API Gateway answers 404): the path exists on this address with other methods only; `Allow` lists them. A method and path served by another address get 404 instead, naming that address.',
    schema: MethodNotAllowedProblem,
    headers: { Allow: HEADERS.Allow },
  },
  RequestHeaderFieldsTooLarge: {
    description: 'Request Header Fields Too Large (local runtime): the request headers exceed 16 KiB; nothing was processed.',
    schema: RequestHeaderFieldsTooLargeProblem,
  },
  UnsupportedMediaType: {
    description:
      'Unsupported Media Type: the JSON body is declared in a charset other than UTF-8 (e.g. `application/json; charset=utf-16`). Send it as UTF-8, with no charset or `charset=utf-8` (RFC 8259 §8.1). Nothing was processed.',
    schema: UnsupportedMediaTypeProblem,
  },
  ServiceUnavailable: {
    description: `Service Unavailable: a backend (the database, the archive storage, the search backend, or the token issuer's JWKS needed to verify the token) cannot be reached, is failing or is throttling requests. Retry after \`Retry-After\` seconds. ${LOCAL_ADMISSION_NOTE}`,
    schema: ServiceUnavailableProblem,
    headers: { 'Retry-After': HEADERS['Retry-After'] },
  },
} as const satisfies Record<string, RouteResponse>;

/** A shared problem response with another description (inlined by the generator). */
export function problem(name: keyof typeof PROBLEM_RESPONSES, description: string): RouteResponse {
  return { ...PROBLEM_RESPONSES[name], description };
}

/** The 503 of a route whose backends fail in their own way (`description`), with the local runtime's refusal added. */
export function serviceUnavailable(description: string): RouteResponse {
  return problem('ServiceUnavailable', `${description} ${LOCAL_ADMISSION_NOTE}`);
}

/** The 503 of a route that calls no backend: only the local runtime's refusal (admission control). */
export const BUSY_PROBLEMS = {
  503: problem('ServiceUnavailable', `Service Unavailable. ${LOCAL_ADMISSION_NOTE}`),
} as const satisfies Record<number, RouteResponse>;

/** Answers any route can give: an unexpected error, or request headers the gateway refuses. */
export const COMMON_PROBLEMS = {
  431: PROBLEM_RESPONSES.RequestHeaderFieldsTooLarge,
  500: PROBLEM_RESPONSES.InternalServerError,
} as const satisfies Record<number, RouteResponse>;

/** Answers of every route that takes a bearer token (the handler stack's checks), besides its own. */
export const AUTHENTICATED_PROBLEMS = {
  400: PROBLEM_RESPONSES.BadRequest,
  401: PROBLEM_RESPONSES.Unauthorized,
  403: PROBLEM_RESPONSES.Forbidden,
  503: PROBLEM_RESPONSES.ServiceUnavailable,
  ...COMMON_PROBLEMS,
} as const satisfies Record<number, RouteResponse>;
