import { IdempotencyConfig, IdempotencyPersistenceLayerError } from '@aws-lambda-powertools/idempotency';
import type { JSONValue } from '@aws-lambda-powertools/commons/types';
import { makeHandlerIdempotent } from '@aws-lambda-powertools/idempotency/middleware';
import { BadRequestError } from '../core/errors.js';
import { executeDeployments } from '../core/deployments.js';
import { eventPublisher, idempotencyStore, services } from '../platform/composition.js';
import { httpHandler, jsonBody, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';
import { logger } from '../platform/logger.js';

type HttpMiddleware = Parameters<typeof httpHandler>[1];

/** Longest accepted `Idempotency-Key`, characters (the OpenAPI document says the same). */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * Idempotency: an `Idempotency-Key` header makes a retried POST return the first response without executing
 * again. Keys are scoped per company and kept 24 h; the same key with a different body or query is 422, and a retry
 * while the first request still runs is 409.
 */
const idempotencyConfig = new IdempotencyConfig({
  eventKeyJmesPath: '[pathParameters.companyId, headers."idempotency-key"]',
  payloadValidationJmesPath: '[body, rawQueryString]',
  throwOnNoIdempotencyKey: true,
  expiresAfterSeconds: 24 * 60 * 60,
  responseHook: (response) => {
    const replayed = response as { headers?: Record<string, string> };
    replayed.headers = { ...(replayed.headers ?? {}), 'idempotent-replayed': 'true' };
    return replayed as typeof response;
  },
});

/**
 * The idempotency middleware, engaged only for requests that carry an `Idempotency-Key` header (requests without
 * one are the common case: no record, no lookup, no log line). The key is checked first: empty or longer than 255
 * characters is a 400 before anything runs. When the response cannot be stored after the changes were made, the
 * client still gets it (a 500 would hide changes that happened): the failure is logged and the record removed, so a
 * retry with the key executes again, which is safe because each entry is a conditional write (it then reports
 * ALREADY_DEPLOYED / ALREADY_UNDEPLOYED for what the first execution did).
 */
function idempotencyWhenKeyed(): HttpMiddleware {
  let inner: HttpMiddleware | undefined;
  const engaged = new WeakSet<object>();
  const idempotency = () => (inner ??= makeHandlerIdempotent({ persistenceStore: idempotencyStore(), config: idempotencyConfig }) as unknown as HttpMiddleware);
  return {
    before: async (request) => {
      const key = request.event.headers?.['idempotency-key'];
      if (key === undefined) return undefined;
      if (key.trim() === '' || key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
        const message = key.trim() === '' ? 'must not be empty' : `must be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters; got ${key.length}`;
        throw new BadRequestError(
          `The Idempotency-Key header ${message}. Send 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters that name this request, or leave the header out; nothing was changed.`,
          [{ path: 'Idempotency-Key', message }],
        );
      }
      engaged.add(request);
      return idempotency().before?.(request);
    },
    after: async (request) => {
      if (!engaged.has(request)) return;
      try {
        await idempotency().after?.(request);
      } catch (error) {
        if (!(error instanceof IdempotencyPersistenceLayerError)) throw error;
        logger.error('The response could not be stored for its Idempotency-Key; it is returned, and a retry with this key executes again', {
          error, path: request.event.rawPath,
        });
        await idempotencyStore().deleteRecord(request.event as unknown as JSONValue).catch((deleteError: unknown) =>
          logger.error('The in-progress idempotency record could not be removed; a retry with this key gets 409 until it expires', { error: deleteError as Error }),
        );
      }
    },
    onError: async (request) => {
      if (engaged.has(request)) await idempotency().onError?.(request);
    },
  };
}

/**
 * POST {base_url}/companies/{companyId}/resources/deployments[?dryRun=true] (spec endpoint 3): 200 with one result
 * item per request entry, in order; 400 for a structurally invalid body and 413 above 5,000 entries (nothing
 * changed). `dryRun=true` returns the items that would result without writing anything.
 */
export const handler = httpHandler(
  async (event, { principal }) => {
    const companyId = pathParameter(event, 'companyId');
    const dryRun = singleQueryParameters(event, ['dryRun']).get('dryRun') ?? 'false';
    if (dryRun !== 'true' && dryRun !== 'false') {
      throw new BadRequestError(`'dryRun' must be true or false; got '${dryRun}'.`, [{ path: 'dryRun', message: 'must be true or false' }]);
    }
    const { devices, scenarios, deployments } = services();
    const result = await executeDeployments(
      {
        devices, scenarios, deployments, events: eventPublisher(),
        onError: (error, context) => logger.error('Deployment write failed', { error: error as Error, ...context }),
      },
      principal,
      companyId,
      jsonBody(event),
      { dryRun: dryRun === 'true' },
    );
    return jsonResponse(200, result);
  },
  idempotencyWhenKeyed(),
);
