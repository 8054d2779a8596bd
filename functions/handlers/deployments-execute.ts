import { IdempotencyConfig } from '@aws-lambda-powertools/idempotency';
import { IDEMPOTENCY_KEY_RETENTION_SECONDS } from '../contract/protocol.js';
import { deploymentsExecute } from '../contract/routes/deployments.js';
import { executeDeployments } from '../core/deployments/deployments.js';
import { idempotencyStore } from '../platform/composition/idempotency.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { idempotencyWhenKeyed } from '../platform/idempotency.js';
import { logger } from '../platform/logger.js';
import { recordDeploymentResults } from '../platform/observability.js';

/**
 * Idempotency: an `Idempotency-Key` header makes a retried POST return the first response without executing
 * again. Keys are scoped per company and kept 24 h; the same key with a different body or query is 422, and a retry
 * while the first request still runs is 409. Executing a request twice is safe (each entry is a conditional write),
 * which idempotencyWhenKeyed relies on when a response cannot be stored.
 */
const idempotencyConfig = new IdempotencyConfig({
  eventKeyJmesPath: '[pathParameters.companyId, headers."idempotency-key"]',
  payloadValidationJmesPath: '[body, rawQueryString]',
  throwOnNoIdempotencyKey: true,
  expiresAfterSeconds: IDEMPOTENCY_KEY_RETENTION_SECONDS,
  responseHook: (response) => {
    const replayed = response as { headers?: Record<string, string> };
    replayed.headers = { ...(replayed.headers ?? {}), 'idempotent-replayed': 'true' };
    return replayed as typeof response;
  },
});

/**
 * POST {base_url}/companies/{companyId}/resources/deployments[?dryRun=true]: 200 with one result
 * item per request entry, in order; 400 for a structurally invalid body and 413 above 5,000 entries (nothing
 * changed). `dryRun=true` returns the items that would result without writing anything.
 */
export const handler = routeHandler(
  deploymentsExecute,
  async ({ params, query, body }, { principal }) => {
    const { devices, scenarios, deployments } = storage();
    const result = await executeDeployments(
      {
        devices,
        scenarios,
        deployments,
        onError: (error, context) => logger.error('Deployment write failed', { error: error as Error, ...context }),
      },
      principal,
      params.companyId,
      body,
      { dryRun: query.dryRun },
    );
    recordDeploymentResults(result);
    return jsonResponse(200, result);
  },
  idempotencyWhenKeyed({ store: idempotencyStore, config: idempotencyConfig }),
);
