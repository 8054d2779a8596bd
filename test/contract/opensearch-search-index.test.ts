/**
 * The SearchIndex contract suite against a real OpenSearch (`npm run test:opensearch`): the node the project's
 * global setup starts, or OPENSEARCH_URL's (OPENSEARCH_AUTH=aws-sigv4 with AWS_REGION for an Amazon OpenSearch
 * Service domain), through the official client.
 * Each test gets a fresh index created from the template; bulk writes use `refresh=true` so they are visible
 * to the next search. The indexes of the run are deleted at the end.
 */
import { afterAll, inject } from 'vitest';
import { OpenSearchSearchIndex } from '../../functions/adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport, type OpenSearchTransport } from '../../functions/adapters/aws/opensearch-transport.js';
import { openSearchSettings } from '../opensearch/settings.js';
import { describeSearchIndexContract } from './search-index.contract.js';

const url = inject('opensearchUrl');

/** One transport for the run, made on the first index. */
let transport: OpenSearchTransport | undefined;

const run = `contract-${Date.now().toString(36)}-${process.pid}`;
const created: OpenSearchSearchIndex[] = [];

describeSearchIndexContract('OpenSearch', async () => {
  transport ??= createOpenSearchTransport(openSearchSettings(url));
  const name = `${run}-${created.length + 1}`;
  const index = new OpenSearchSearchIndex({ transport, alias: `${name}-alias`, index: name, refresh: 'true' });
  await index.createIndex();
  created.push(index);
  return index;
});

afterAll(async () => {
  await Promise.all(created.map((index) => index.deleteIndex()));
});
