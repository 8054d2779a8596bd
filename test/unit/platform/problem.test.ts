import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  BadRequestError,
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidArchiveError,
  NotFoundError,
  OAuthError,
  PayloadTooLargeError,
  QuotaExceededError,
  ServiceUnavailableError,
  TooManyRequestsError,
  UnauthorizedError,
} from '../../../functions/core/shared/errors.js';
import { jsonResponse, routeHandler } from '../../../functions/platform/http.js';
import { logger } from '../../../functions/platform/logger.js';
import { oauthErrorResponse, problemHeadersOf, statusOf, titleOf } from '../../../functions/platform/problem.js';
import { lambdaContext } from '../../support/lambda-context.js';
import { TEST_ROUTE } from '../../support/route-input.js';

// The logger reads its level when its module loads: vi.hoisted runs before the imports above.
vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

type Problem = Record<string, unknown> & { type: string; title: string; status: number; detail: string };

function event(rawPath = '/companies/acme/resources/deployments'): APIGatewayProxyEventV2 {
  const now = new Date();
  return {
    version: '2.0',
    routeKey: 'POST /companies/{companyId}/resources/deployments',
    rawPath,
    rawQueryString: '',
    headers: { 'Content-Type': 'application/json' },
    requestContext: {
      accountId: 'test',
      apiId: 'main',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method: 'POST', path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: 'request-1',
      routeKey: 'POST /companies/{companyId}/resources/deployments',
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    isBase64Encoded: false,
  };
}

/** Runs a public handler that throws `error` and returns the response with its parsed body. */
async function responseFor(error: unknown, rawPath?: string): Promise<{ result: APIGatewayProxyStructuredResultV2; body: Problem }> {
  const handler = routeHandler(TEST_ROUTE, async () => {
    throw error;
  });
  const result = (await handler(event(rawPath), lambdaContext())) as APIGatewayProxyStructuredResultV2;
  expect(result.headers?.['content-type']).toBe('application/problem+json');
  return { result, body: JSON.parse(result.body ?? '') as Problem };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the handler stack's problem+json mapping", () => {
  it.each([
    [new BadRequestError('bad'), 400, 'Bad Request'],
    [new ForbiddenError('no'), 403, 'Forbidden'],
    [new NotFoundError('gone'), 404, 'Not Found'],
    [new ConflictError('exists'), 409, 'Conflict'],
    [new PayloadTooLargeError('too big'), 413, 'Payload Too Large'],
  ])('maps %s to its status with type, title, status, detail and instance', async (error, status, title) => {
    const { result, body } = await responseFor(error);
    expect(result.statusCode).toBe(status);
    expect(body).toEqual({
      type: `https://device-scenario-service.dev/problems/${title.toLowerCase().replaceAll(' ', '-')}`,
      title,
      status,
      detail: error.message,
      instance: '/companies/acme/resources/deployments',
    });
    expect(result.headers).not.toHaveProperty('WWW-Authenticate');
    expect(result.headers).not.toHaveProperty('Retry-After');
  });

  it('gives each error kind a distinct type URI', async () => {
    const errors = [
      new BadRequestError('a'),
      new UnauthorizedError('a'),
      new ForbiddenError('a'),
      new NotFoundError('a'),
      new ConflictError('a'),
      new QuotaExceededError('a', { quotaBytes: 1, usedBytes: 1, archiveBytes: 1 }),
      new PayloadTooLargeError('a'),
      new InvalidArchiveError('a', []),
      new ServiceUnavailableError('a'),
    ];
    const types = await Promise.all(errors.map(async (error) => (await responseFor(error)).body.type));
    expect(new Set(types).size).toBe(errors.length);
  });

  it('400 carries every violation in errors', async () => {
    const violations = [
      { path: 'page', message: 'must be an integer' },
      { path: 'colour', message: 'unknown parameter' },
    ];
    const { result, body } = await responseFor(new BadRequestError('2 invalid parameters', violations));
    expect(result.statusCode).toBe(400);
    expect(body.errors).toEqual(violations);
  });

  it('lists at most 20 violations, with errorCount holding the total and the detail saying how many were omitted', async () => {
    const violations = Array.from({ length: 3000 }, (_, index) => ({ path: `p${index}`, message: `Unknown parameter 'p${index}'.` }));
    const { result, body } = await responseFor(new BadRequestError('The request has invalid query parameters.', violations));
    expect(result.statusCode).toBe(400);
    expect(body.errors).toEqual(violations.slice(0, 20));
    expect(body.errorCount).toBe(3000);
    expect(body.detail).toBe(
      'The request has invalid query parameters. Only the first 20 of 3000 errors are listed; 2980 more were omitted.',
    );
    const archive = await responseFor(new InvalidArchiveError('21 problems', violations.slice(0, 21)));
    expect(archive.body).toMatchObject({ status: 422, errorCount: 21 });
    expect(archive.body.errors).toHaveLength(20);
    const exactly = await responseFor(new BadRequestError('20 problems', violations.slice(0, 20)));
    expect(exactly.body.errors).toHaveLength(20);
    expect(exactly.body).not.toHaveProperty('errorCount');
  });

  it('400 without violations has no errors member', async () => {
    const { body } = await responseFor(new BadRequestError('bad'));
    expect(body).not.toHaveProperty('errors');
  });

  it('401 carries WWW-Authenticate: Bearer with the error code and a quote-safe description', async () => {
    const missing = await responseFor(new UnauthorizedError('An Authorization header is required.', null));
    expect(missing.result.statusCode).toBe(401);
    expect(missing.result.headers?.['WWW-Authenticate']).toBe('Bearer');
    expect(missing.body).toMatchObject({ status: 401, title: 'Unauthorized', detail: 'An Authorization header is required.' });

    const expired = await responseFor(new UnauthorizedError('The token "abc" has expired.'));
    expect(expired.result.headers?.['WWW-Authenticate']).toBe(
      `Bearer error="invalid_token", error_description="The token 'abc' has expired."`,
    );
    expect(expired.body.detail).toBe('The token "abc" has expired.');
  });

  it('413 quota problem carries quotaBytes and usedBytes', async () => {
    const { result, body } = await responseFor(
      new QuotaExceededError('Not enough storage.', { quotaBytes: 5_242_880, usedBytes: 5_000_000, archiveBytes: 400_000 }),
    );
    expect(result.statusCode).toBe(413);
    expect(body).toMatchObject({ title: 'Storage Quota Exceeded', status: 413, quotaBytes: 5_242_880, usedBytes: 5_000_000 });
  });

  it('422 carries every archive violation in errors', async () => {
    const violations = [
      { path: 'scenario.json#/version', message: 'must be a semantic version' },
      { path: 'resources/', message: 'missing' },
    ];
    const { result, body } = await responseFor(new InvalidArchiveError('2 problems', violations));
    expect(result.statusCode).toBe(422);
    expect(body).toMatchObject({ title: 'Invalid Scenario Archive', status: 422, errors: violations });
  });

  it('503 carries Retry-After in seconds', async () => {
    const defaulted = await responseFor(new ServiceUnavailableError('Search is down.'));
    expect(defaulted.result.statusCode).toBe(503);
    expect(defaulted.result.headers?.['Retry-After']).toBe('5');
    expect(defaulted.body).toMatchObject({ status: 503, detail: 'Search is down.' });
    const explicit = await responseFor(new ServiceUnavailableError('Search is down.', 30));
    expect(explicit.result.headers?.['Retry-After']).toBe('30');
  });

  it('answers an unexpected error with a generic 500 that does not leak its message, and logs it once', async () => {
    const logged = vi.spyOn(logger, 'error');
    const secret = 'connect ECONNREFUSED 10.0.0.5:5432 password=hunter2';
    const { result, body } = await responseFor(new TypeError(secret));
    expect(result.statusCode).toBe(500);
    expect(body).toMatchObject({ title: 'Internal Server Error', status: 500, instance: '/companies/acme/resources/deployments' });
    expect(body.detail).toBeTypeOf('string');
    expect(result.body).not.toContain('ECONNREFUSED');
    expect(result.body).not.toContain('hunter2');
    expect(result.body).not.toContain('TypeError');
    expect(logged).toHaveBeenCalledTimes(1);
  });

  it('answers a thrown non-Error value with 500 too', async () => {
    const { result } = await responseFor('a bare string with internals');
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('internals');
  });

  it('treats an error subclass outside the DomainError hierarchy as unexpected, even with a status property', async () => {
    const error = Object.assign(new Error('upstream said 404 for s3://bucket/key'), { statusCode: 404, status: 404 });
    const { result } = await responseFor(error);
    expect(result.statusCode).toBe(500);
    expect(result.body).not.toContain('s3://');
  });

  it.each([
    [
      'S3 SlowDown',
      Object.assign(new Error('Please reduce your request rate.'), {
        name: 'SlowDown',
        $fault: 'client',
        $metadata: { httpStatusCode: 503 },
      }),
      '2',
    ],
    [
      'a retryable throttling error',
      Object.assign(new Error('Too Many Requests'), { name: 'TooManyRequestsException', $retryable: { throttling: true } }),
      '2',
    ],
    [
      'S3 InternalError',
      Object.assign(new Error('We encountered an internal error.'), {
        name: 'InternalError',
        $fault: 'server',
        $metadata: { httpStatusCode: 500 },
      }),
      '5',
    ],
    [
      'an AggregateError of refused connections',
      Object.assign(
        new AggregateError(
          [
            Object.assign(new Error('connect ECONNREFUSED ::1:8000'), { code: 'ECONNREFUSED', syscall: 'connect' }),
            Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED', syscall: 'connect' }),
          ],
          'connect ECONNREFUSED localhost:8000',
        ),
        { code: 'ECONNREFUSED', $metadata: { attempts: 3 } },
      ),
      '5',
    ],
    ['EPIPE', Object.assign(new Error('write EPIPE'), { code: 'EPIPE', syscall: 'write' }), '5'],
    [
      'a library error caused by a timeout',
      new Error('Failed to save record', { cause: Object.assign(new Error('timed out'), { name: 'TimeoutError' }) }),
      '5',
    ],
  ])(
    'maps a backend failure (%s) to 503 with Retry-After, logged once as a warning and not as an error',
    async (_name, error, retryAfter) => {
      const warned = vi.spyOn(logger, 'warn');
      const failed = vi.spyOn(logger, 'error');
      const { result, body } = await responseFor(error);
      expect(result.statusCode).toBe(503);
      expect(result.headers?.['Retry-After']).toBe(retryAfter);
      expect(body).toMatchObject({ title: 'Service Unavailable', status: 503, detail: expect.stringMatching(/retry/i) });
      expect(result.body).not.toContain((error as Error).message);
      expect(warned).toHaveBeenCalledTimes(1);
      expect(failed).not.toHaveBeenCalled();
    },
  );

  it('keeps a file-system error (not a backend) and an HTTP 4xx of AWS at 500', async () => {
    const missing = Object.assign(new Error("ENOENT: no such file or directory, open '/x'"), { code: 'ENOENT', syscall: 'open' });
    expect((await responseFor(missing)).result.statusCode).toBe(500);
    const validation = Object.assign(new Error('One or more parameter values were invalid'), {
      name: 'ValidationException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400 },
    });
    expect((await responseFor(validation)).result.statusCode).toBe(500);
  });

  it('answers a DomainError subclass as the kind it declares', async () => {
    class StaleEtagError extends DomainError {
      readonly kind = 'conflict';
    }
    const { result, body } = await responseFor(new StaleEtagError('The resource changed since it was read.'));
    expect(result.statusCode).toBe(409);
    expect(body).toMatchObject({
      type: 'https://device-scenario-service.dev/problems/conflict',
      title: 'Conflict',
      detail: 'The resource changed since it was read.',
    });
  });

  it('leaves successful responses untouched', async () => {
    const handler = routeHandler(TEST_ROUTE, async () => jsonResponse(200, { ok: true }));
    const result = (await handler(event(), lambdaContext())) as APIGatewayProxyStructuredResultV2;
    expect(result).toEqual({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{"ok":true}' });
  });
});

describe('how a domain error is answered', () => {
  it('gives each kind its status and title, and Retry-After in whole seconds to the ones that may retry', () => {
    const answers = [
      new BadRequestError('a'),
      new NotFoundError('a'),
      new QuotaExceededError('a', { quotaBytes: 1, usedBytes: 1, archiveBytes: 1 }),
      new TooManyRequestsError('a', 7),
      new ServiceUnavailableError('a'),
    ].map((error) => [statusOf(error), titleOf(error), problemHeadersOf(error)['Retry-After']]);
    expect(answers).toEqual([
      [400, 'Bad Request', undefined],
      [404, 'Not Found', undefined],
      [413, 'Storage Quota Exceeded', undefined],
      [429, 'Too Many Requests', '7'],
      [503, 'Service Unavailable', '5'],
    ]);
  });

  it('answers an OAuth refusal 400, 401 for an unauthenticated client (a Basic challenge when it used Basic), 429 or 503 to retry later', () => {
    expect(statusOf(new OAuthError('invalid_request', 'a'))).toBe(400);
    const basic = oauthErrorResponse(new OAuthError('invalid_client', 'a', true));
    expect([basic.statusCode, basic.headers?.['WWW-Authenticate']]).toEqual([401, 'Basic realm="device"']);
    const attempts = oauthErrorResponse(OAuthError.retryLater('too-many-attempts', 'a', 0.2));
    expect([attempts.statusCode, attempts.headers?.['Retry-After'], attempts.body]).toEqual([
      429,
      '1',
      JSON.stringify({ error: 'temporarily_unavailable', error_description: 'a' }),
    ]);
    expect(oauthErrorResponse(OAuthError.retryLater('busy', 'a', 2)).statusCode).toBe(503);
  });
});
