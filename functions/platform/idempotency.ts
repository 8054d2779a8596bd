/**
 * The `Idempotency-Key` middleware of the HTTP handlers: Powertools idempotency, engaged only when the header is
 * present, with the key checked first and a response that cannot be stored still returned.
 */
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { type IdempotencyConfig, IdempotencyPersistenceLayerError } from '@aws-lambda-powertools/idempotency';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import type { BasePersistenceLayer } from '@aws-lambda-powertools/idempotency/persistence';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { MAX_IDEMPOTENCY_KEY_LENGTH } from '../contract/protocol.js';
import { BadRequestError } from '../core/shared/errors.js';
import { logger } from './logger.js';

/** What idempotencyWhenKeyed needs. */
export interface KeyedIdempotencyOptions {
  /** The persistence layer, built on first use (so that configuration is read at invocation, not at load). */
  store: () => BasePersistenceLayer;
  /** Powertools configuration; its `eventKeyJmesPath` must include `headers."idempotency-key"`. */
  config: IdempotencyConfig;
}

type Middleware = MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>;
type Request = Parameters<NonNullable<Middleware['before']>>[0];

/**
 * middy middleware (register it after header normalization): Powertools idempotency for requests that carry an
 * `Idempotency-Key` header; requests without one (the common case) get no record, no lookup and no log line.
 * - The key is checked before anything runs: empty (or blank) or longer than MAX_IDEMPOTENCY_KEY_LENGTH
 *   characters throws BadRequestError (400) naming the header.
 * - When the response cannot be stored after the handler made its changes, the client still gets it (a 500 would
 *   hide changes that happened): the failure is logged and the in-progress record removed, so a retry with the key
 *   executes again. Handlers using this must be safe to run twice (e.g. conditional writes).
 * - When the handler fails and its in-progress record cannot be removed, the handler's error is answered (logged).
 * Failing to reach the store before the handler runs throws IdempotencyPersistenceLayerError (problem.ts: 503).
 */
export function idempotencyWhenKeyed(options: KeyedIdempotencyOptions): Middleware {
  let inner: Middleware | undefined;
  const idempotency = () =>
    (inner ??= makeHandlerIdempotent({ persistenceStore: options.store(), config: options.config }) as unknown as Middleware);
  // The requests that wrote their own in-progress record: only those reach Powertools' after/onError.
  const engaged = new WeakSet<object>();
  return {
    before: async (request) => {
      const key = request.event.headers?.['idempotency-key'];
      if (key === undefined) return undefined;
      checkIdempotencyKey(key);
      // Throws when the request wrote no record of its own (another request holds the key: 409; the store is down:
      // 503). Such a request must not reach Powertools' onError, which would delete the record of the request holding
      // the key, and the next retry would execute again instead of getting that request's response.
      const replay = await idempotency().before?.(request);
      engaged.add(request);
      // A replay is returned from here (middy's early return).
      return replay;
    },
    after: async (request) => {
      if (!engaged.has(request)) return;
      await storeResponseOrRelease(idempotency(), options, request);
    },
    onError: async (request) => {
      if (!engaged.has(request)) return;
      await releaseAfterFailure(idempotency(), request);
    },
  };
}

/** Throws BadRequestError (400) naming the header when the key is blank or longer than MAX_IDEMPOTENCY_KEY_LENGTH. */
function checkIdempotencyKey(key: string): void {
  const blank = key.trim() === '';
  if (!blank && key.length <= MAX_IDEMPOTENCY_KEY_LENGTH) return;
  const message = blank ? 'must not be empty' : `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters; got ${key.length}`;
  throw new BadRequestError(
    `The Idempotency-Key header ${message}. Send 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters naming this request, or leave the header out; nothing was changed.`,
    [{ path: 'Idempotency-Key', message }],
  );
}

/**
 * Stores the response for the key. When the store fails the response is still returned (the handler's changes
 * happened), and the in-progress record is removed so that a retry with the key executes again.
 */
async function storeResponseOrRelease(idempotency: Middleware, options: KeyedIdempotencyOptions, request: Request): Promise<void> {
  try {
    await idempotency.after?.(request);
  } catch (error) {
    if (!(error instanceof IdempotencyPersistenceLayerError)) throw error;
    logger.error('The response could not be stored for its Idempotency-Key; it is returned, and a retry with this key executes again', {
      error,
      path: request.event.rawPath,
    });
    await options
      .store()
      .deleteRecord(request.event as unknown as JSONValue)
      .catch((deleteError: unknown) =>
        logger.error('The in-progress idempotency record could not be removed; a retry with this key answers 409 until it expires', {
          error: deleteError as Error,
          path: request.event.rawPath,
        }),
      );
  }
}

/** Removes the in-progress record of a failed request; a failure to do so is logged, never thrown. */
async function releaseAfterFailure(idempotency: Middleware, request: Request): Promise<void> {
  try {
    await idempotency.onError?.(request);
  } catch (error) {
    // Thrown from here it would replace the handler's error and escape the problem+json mapping.
    logger.error(
      'The in-progress idempotency record of a failed request could not be removed; a retry with this key answers 409 until it expires',
      {
        error: error as Error,
        path: request.event.rawPath,
      },
    );
  }
}
