import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { IdempotencyAlreadyInProgressError, IdempotencyValidationError } from '@aws-lambda-powertools/idempotency';
import { ConflictError, DomainError, UnauthorizedError, UnprocessableRequestError } from '../core/errors.js';
import { logger } from './logger.js';

/** An RFC 9457 problem body. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  [extension: string]: unknown;
}

/** Builds an `application/problem+json` API Gateway result. */
export function problemResponse(body: ProblemBody, headers: Record<string, string> = {}): APIGatewayProxyStructuredResultV2 {
  return {
    statusCode: body.status,
    headers: { 'content-type': 'application/problem+json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Turns any thrown value into a DomainError, or undefined when it is unexpected (→ 500). */
function toDomainError(error: unknown): DomainError | undefined {
  if (error instanceof DomainError) return error;
  if (error instanceof IdempotencyValidationError) {
    return new UnprocessableRequestError('This Idempotency-Key was already used with a different request; use a new key for a new request.');
  }
  if (error instanceof IdempotencyAlreadyInProgressError) {
    return new ConflictError('A request with this Idempotency-Key is still being processed; retry in a moment to get its response.');
  }
  return undefined;
}

/**
 * middy `onError` middleware (register it first so it runs last): maps DomainErrors (and Powertools idempotency
 * errors) to RFC 9457 problem+json; logs anything else once and answers a generic 500 without internals.
 */
export function problemJsonErrors(): MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  return {
    onError: async (request) => {
      const error = toDomainError(request.error);
      const instance = request.event?.rawPath;
      if (error === undefined) {
        logger.error('Unhandled error', { error: request.error as Error, path: instance });
        request.response = problemResponse({
          type: 'https://device-scenario-service.dev/problems/internal-server-error',
          title: 'Internal Server Error',
          status: 500,
          detail: 'An unexpected error occurred; it has been logged.',
          ...(instance === undefined ? {} : { instance }),
        });
        return;
      }
      if (error.status >= 500) logger.warn('Request failed', { error, path: instance });
      // toProblem caps the `errors` list (MAX_PROBLEM_ERRORS) for every problem kind.
      const { type, title, status, detail, ...extensions } = error.toProblem();
      request.response = problemResponse(
        { type, title, status, detail, ...(instance === undefined ? {} : { instance }), ...extensions },
        error instanceof UnauthorizedError ? { ...error.headers } : error.headers,
      );
    },
  };
}
