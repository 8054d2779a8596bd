import middy from '@middy/core';
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { logger } from '../platform/logger.js';
import { openSearchIndexes } from '../platform/search-composition.js';

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
 * `<alias>-*` index) and, when the alias does not exist, create the first concrete index `<alias>-<UTC time>` with
 * the alias; existing indexes and their data are untouched (run the reindex to apply changed mappings to them).
 * Delete: nothing, the index and its data are retained, like the tables.
 * @throws ServiceUnavailableError when the domain cannot be reached; OpenSearchRequestError when it refuses the
 *   template or the index; CloudFormation then reports the resource as failed.
 */
export const handler = middy<CloudFormationCustomResourceEvent, SetupResult>({ timeoutEarlyInMillis: 0 }).handler(async (event) => {
  const indexes = openSearchIndexes();
  if (event.RequestType === 'Delete') {
    logger.info('Search index setup: delete requested; the index and its data are retained', { alias: indexes.alias });
    return { PhysicalResourceId: event.PhysicalResourceId };
  }
  const { indexes: behindAlias, created } = await indexes.ensure();
  logger.info('Search index setup done', { alias: indexes.alias, indexes: behindAlias, created, requestType: event.RequestType });
  return { PhysicalResourceId: indexes.alias, Data: { Indexes: behindAlias.join(',') } };
});
