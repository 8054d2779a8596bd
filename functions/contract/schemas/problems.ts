/**
 * RFC 9457 problem bodies: the generic `Problem` and one closed variant per error kind, `type`, `title` and `status`
 * fixed from the domain error class (as platform/problem.ts answers it) or, for the local gateway's own answers, from its title.
 */
import * as z from 'zod';
import { PASSWORD_POLICY_TEXT } from '../../core/access/password-policy.js';
import { MAX_PAGE_SIZE } from '../../core/search/query.js';
import {
  BadRequestError,
  ConflictError,
  type DomainError,
  ForbiddenError,
  InvalidArchiveError,
  NewPasswordRequiredError,
  NotFoundError,
  PayloadTooLargeError,
  QuotaExceededError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
  UnprocessableRequestError,
  UnsupportedMediaTypeError,
} from '../../core/shared/errors.js';
import { MAX_PROBLEM_ERRORS, PROBLEM_KINDS, problemTypeOf } from '../problem-kinds.js';

/** One `{ path, message }` entry of a problem's `errors`. */
export const ProblemViolation = z.object({ path: z.string(), message: z.string() }).strict().meta({
  id: 'ProblemViolation',
  description: 'One violation: `path` locates it (JSON pointer into the body, archive path or query parameter name).',
});

/** The members every problem body has; `errorCount` only when `errors` was cut. */
const problemMembers = {
  type: z.url().describe('Stable identifier of the problem kind.'),
  title: z.string().describe('Short summary of the problem kind.'),
  status: z.int().min(400).max(599).describe('HTTP status code.'),
  detail: z.string().describe('Explanation specific to this occurrence.'),
  instance: z.string().optional().describe('Request path of this occurrence.'),
  errorCount: z
    .int()
    .min(MAX_PROBLEM_ERRORS + 1)
    .optional()
    .describe(
      `Present when \`errors\` was cut: the total number of violations, of which only the first ${MAX_PROBLEM_ERRORS} are listed (\`detail\` says how many were omitted).`,
    ),
};

/** Any problem body: the RFC 9457 members, open to the extension members of each problem type. */
export const Problem = z
  .object(problemMembers)
  .loose()
  .meta({ id: 'Problem', description: 'RFC 9457 problem details. Extension members depend on the problem type.' });

/** The `errors` list of a problem: at most MAX_PROBLEM_ERRORS entries. */
const violations = z.array(ProblemViolation).min(1).max(MAX_PROBLEM_ERRORS);

export { problemTypeOf };

/** A closed problem schema with `type`, `title` and `status` fixed, plus `extensions`. */
function problemVariant<const Extensions extends z.ZodRawShape>(
  id: string,
  kind: { type: string; title: string; status: number },
  description: string,
  extensions: Extensions,
  examples?: readonly Record<string, unknown>[],
) {
  return z
    .object({ ...problemMembers, type: z.literal(kind.type), title: z.literal(kind.title), status: z.literal(kind.status), ...extensions })
    .strict()
    .meta({ id, description, ...(examples === undefined ? {} : { examples: [...examples] }) });
}

/** A variant of a domain error class. */
function errorVariant<const Extensions extends z.ZodRawShape>(
  id: string,
  error: DomainError & { kind: keyof typeof PROBLEM_KINDS },
  description: string,
  extensions: Extensions,
  examples?: readonly Record<string, unknown>[],
) {
  const { status, title } = PROBLEM_KINDS[error.kind];
  return problemVariant(id, { type: problemTypeOf(title), title, status }, description, extensions, examples);
}

export const BadRequestProblem = errorVariant(
  'BadRequestProblem',
  new BadRequestError(''),
  'The request is malformed: unknown or repeated query parameter, bad value, invalid JSON or body structure. `errors` names each parameter or body path with the allowed values.',
  { errors: violations.optional() },
  [
    {
      type: problemTypeOf(PROBLEM_KINDS['bad-request'].title),
      title: 'Bad Request',
      status: 400,
      detail: 'The search request has 1 invalid parameter(s): pageSize.',
      instance: '/resources/search',
      errors: [{ path: 'pageSize', message: `'pageSize' must be an integer from 1 to ${MAX_PAGE_SIZE}; got '500'.` }],
    },
  ],
);
export const UnsupportedMediaTypeProblem = errorVariant(
  'UnsupportedMediaTypeProblem',
  new UnsupportedMediaTypeError(''),
  'The JSON body is declared in a character encoding other than UTF-8, the only one JSON exchanged between systems may use (RFC 8259 §8.1).',
  {},
);
export const UnauthorizedProblem = errorVariant(
  'UnauthorizedProblem',
  new UnauthorizedError('', null),
  'Missing, malformed, expired or untrusted bearer token; or wrong credentials at the token endpoint.',
  {},
);
export const NewPasswordRequiredProblem = errorVariant(
  'NewPasswordRequiredProblem',
  new NewPasswordRequiredError('', ''),
  'The password is right, but the user must set a new one first (invited, or their password was reset): send the same sign-in with `new_password` added. `detail` states the password policy, and `passwordPolicy` states it alone.',
  {
    challenge: z.literal('new_password_required').describe('The challenge to answer: `new_password_required`.'),
    passwordPolicy: z.string().describe('The password policy in words, for a form to show before the new password is typed.'),
  },
  [
    {
      type: problemTypeOf(PROBLEM_KINDS['new-password-required'].title),
      title: 'New Password Required',
      status: 401,
      detail: `Set a new password: send the same JSON with \`new_password\` added, and the answer is your tokens. The new password must have ${PASSWORD_POLICY_TEXT}.`,
      challenge: 'new_password_required',
      passwordPolicy: PASSWORD_POLICY_TEXT,
    },
  ],
);
/** A refused sign-in at the token endpoint: wrong credentials, or the new-password challenge. */
export const SignInRefusedProblem = z.union([UnauthorizedProblem, NewPasswordRequiredProblem]).meta({
  id: 'SignInRefusedProblem',
  description:
    'Wrong credentials (`Unauthorized`), or a user who must set a new password first (`New Password Required`, with `challenge`).',
});
export const ForbiddenProblem = errorVariant(
  'ForbiddenProblem',
  new ForbiddenError(''),
  'The token is valid but lacks the required scope or the addressed company.',
  {},
);
export const NotFoundProblem = errorVariant(
  'NotFoundProblem',
  new NotFoundError(''),
  'The addressed resource does not exist (or belongs to a company the caller cannot see).',
  {},
);
export const ConflictProblem = errorVariant(
  'ConflictProblem',
  new ConflictError(''),
  'The resource already exists and is immutable (a scenario version), or a request with the same Idempotency-Key is still being processed.',
  {},
);
/** The 409 of a command that the named sub-device does not advertise. */
export const CommandNotAdvertisedProblem = errorVariant(
  'CommandNotAdvertisedProblem',
  new ConflictError(''),
  'The named sub-device does not advertise the command in its device’s latest health report (or the device has no such hub or sub-device); nothing was queued.',
  { cause: z.literal('COMMAND_NOT_ADVERTISED').describe('Why: the command is not advertised.') },
);
/** A 409 of the commands routes: not advertised, or (cancel) already final. */
export const CommandConflictProblem = z.union([CommandNotAdvertisedProblem, ConflictProblem]).meta({
  id: 'CommandConflictProblem',
  description: 'The command is not advertised (with `cause`), or it is already final.',
});
export const UnprocessableRequestProblem = errorVariant(
  'UnprocessableRequestProblem',
  new UnprocessableRequestError(''),
  'The Idempotency-Key was already used with a different request body or query; use a new key for a new request.',
  {},
);
export const QuotaExceededProblem = errorVariant(
  'QuotaExceededProblem',
  new QuotaExceededError('', { quotaBytes: 0, usedBytes: 0, archiveBytes: 0 }),
  "Storing the archive would exceed the company's storage quota.",
  {
    quotaBytes: z.int().min(0).describe("The company's storage quota, bytes."),
    usedBytes: z.int().min(0).describe('Bytes already used by stored archives.'),
    archiveBytes: z.int().min(0).describe('Size of the refused archive, bytes.'),
  },
  [
    {
      type: problemTypeOf(PROBLEM_KINDS['quota-exceeded'].title),
      title: 'Storage Quota Exceeded',
      status: 413,
      detail: "Storing this 2097152-byte archive would exceed company 'globex' storage quota: 4194304 of 5242880 bytes are used.",
      quotaBytes: 5242880,
      usedBytes: 4194304,
      archiveBytes: 2097152,
    },
  ],
);
export const PayloadTooLargeProblem = errorVariant(
  'PayloadTooLargeProblem',
  new PayloadTooLargeError(''),
  "The request body is larger than the address accepts (API Gateway's payload limit, the direct upload limit, or the most deployment entries); larger archives go through a presigned upload.",
  {},
  [
    {
      type: problemTypeOf(PROBLEM_KINDS['payload-too-large'].title),
      title: 'Payload Too Large',
      status: 413,
      detail: 'The request body exceeds 10485760 bytes.',
    },
  ],
);
export const InvalidArchiveProblem = errorVariant(
  'InvalidArchiveProblem',
  new InvalidArchiveError('', []),
  'The archive is not a readable ZIP, or scenario.json is missing or not compliant, or referenced resources are missing. `errors` lists every violation found, not only the first.',
  { errors: violations },
  [
    {
      type: problemTypeOf(PROBLEM_KINDS['invalid-archive'].title),
      title: 'Invalid Scenario Archive',
      status: 422,
      detail: 'The scenario archive has 2 problem(s); nothing was stored.',
      errors: [
        { path: 'scenario.json/version', message: 'must be a semantic version such as 1.0.0' },
        { path: 'resources/assets/index.html', message: 'referenced by scenario.json but missing from the archive' },
      ],
    },
  ],
);
export const TooManyRequestsProblem = errorVariant(
  'TooManyRequestsProblem',
  new TooManyRequestsError('', 1),
  'Too many failed attempts from this address: wait `Retry-After` seconds.',
  {},
);
export const ServiceUnavailableProblem = errorVariant(
  'ServiceUnavailableProblem',
  new ServiceUnavailableError(''),
  "A backend is unavailable: the database, the archive storage, the search engine, or the token issuer's key set (JWKS) needed to verify the token; or, locally, the address admits no more requests for now.",
  {},
);
export const InternalServerErrorProblem = problemVariant(
  'InternalServerErrorProblem',
  { type: problemTypeOf('Internal Server Error'), title: 'Internal Server Error', status: 500 },
  'An unexpected error; it has been logged. No internals are disclosed.',
  {},
);
export const MethodNotAllowedProblem = problemVariant(
  'MethodNotAllowedProblem',
  { type: problemTypeOf('Method Not Allowed'), title: 'Method Not Allowed', status: 405 },
  'The path exists on this address, with other methods only (listed in `Allow`).',
  {},
);
export const RequestHeaderFieldsTooLargeProblem = problemVariant(
  'RequestHeaderFieldsTooLargeProblem',
  { type: problemTypeOf('Request Header Fields Too Large'), title: 'Request Header Fields Too Large', status: 431 },
  'The request headers exceed 16 KiB (a very long token or many cookies).',
  {},
);

/** 413 of the upload: the storage quota, or the request body above a limit. */
export const UploadTooLargeProblem = z.union([QuotaExceededProblem, PayloadTooLargeProblem]).meta({
  id: 'UploadTooLargeProblem',
  description:
    "Either storing the archive would exceed the company's storage quota, or the request body exceeds the upload address's limit.",
});

/**
 * The `problem` of a REJECTED presigned upload: the 409, 413 or 422 problem a direct upload would get, or 410 with
 * `reason` for an upload that never completed. Open: it carries the members of the problem it stands for.
 */
export const UploadProblem = z
  .object({
    ...problemMembers,
    status: z.union([z.literal(409), z.literal(410), z.literal(413), z.literal(422)]),
    reason: z.enum(['expired', 'interrupted']).optional().describe('With status 410 only: why the upload never completed.'),
  })
  .loose()
  .meta({
    id: 'UploadProblem',
    description:
      'An RFC 9457 problem body: status 409, 413 or 422 as for a direct upload, or 410 `Upload Not Completed` with `reason` for an upload that never completed.',
  });
