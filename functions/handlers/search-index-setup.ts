import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { type SetupWaiting, searchIndexSetup } from '../platform/composition/search.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/** What the CDK `Provider` framework expects back from `onEvent`. */
export interface SetupResult {
  /** The alias (OPENSEARCH_INDEX): the resource is the alias and its template; renaming it replaces the resource. */
  PhysicalResourceId: string;
  /** `Indexes`: the concrete indexes behind the alias, comma-separated. */
  Data?: Record<string, string>;
}

/**
 * CloudFormation custom resource (`onEvent` of the CDK Provider framework) installing the search index in the
 * OpenSearch domain. Create and Update: put the index template (opensearch-queries.ts `indexTemplate()`, for every
 * `<alias>-*` index, with OPENSEARCH_REPLICAS replicas) and, when the alias does not exist, create the first
 * concrete index `<alias>-<UTC time>` with the alias; existing indexes keep their data and mappings and take the
 * replica count (run the reindex to apply changed mappings to them). While the domain answers 403, 429, 5xx or
 * cannot be reached, the whole setup is tried again with jittered exponential backoff (2 s doubling to 60 s) for up
 * to SETUP_RETRY_BUDGET_MS (SETUP_RETRY_POLICY). Delete: nothing, the index and its data are retained, like the tables.
 * @param waiting overrides of the policy's clock, waits and jitter (tests inject `sleep` and `now`).
 * @throws ServiceUnavailableError when the domain still cannot be reached once the budget is spent;
 *   OpenSearchRequestError when it refuses the template or the index (403 only after the budget); CloudFormation
 *   then reports the resource as failed.
 */
export function createHandler(
  waiting: Omit<SetupWaiting, 'onRetry'> = {},
): (event: CloudFormationCustomResourceEvent, context: Context) => Promise<SetupResult> {
  return eventHandler<CloudFormationCustomResourceEvent, SetupResult>().handler(async (event) => {
    const indexes = searchIndexSetup();
    if (event.RequestType === 'Delete') {
      logger.info('Search index setup: delete requested; the index and its data are retained', { alias: indexes.alias });
      return { PhysicalResourceId: event.PhysicalResourceId };
    }
    const { indexes: behindAlias, created } = await indexes.ensure({
      ...waiting,
      onRetry: ({ error, attempt, delayMs }) => {
        logger.warn('Search index setup: the domain refused, trying again', {
          attempt,
          delayMs,
          error: error instanceof Error ? error.message : String(error),
        });
      },
    });
    logger.info('Search index setup done', {
      alias: indexes.alias,
      indexes: behindAlias,
      created,
      replicas: indexes.replicas,
      requestType: event.RequestType,
    });
    return { PhysicalResourceId: indexes.alias, Data: { Indexes: behindAlias.join(',') } };
  });
}

/** The deployed handler (see createHandler). */
export const handler = createHandler();
