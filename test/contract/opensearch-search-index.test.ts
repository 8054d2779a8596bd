/**
 * The SearchIndex contract suite against OpenSearch, when OPENSEARCH_URL is set (e.g. `http://localhost:9200`;
 * OPENSEARCH_AUTH=aws-sigv4 with AWS_REGION for an Amazon OpenSearch Service domain), through the official client.
 * Each test gets a fresh index created from the template; bulk writes use `refresh=wait_for` so they are visible
 * to the next search. The indexes of the run are deleted at the end.
 */
import { afterAll, describe, it } from 'vitest';
import { OpenSearchSearchIndex } from '../../functions/adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport } from '../../functions/adapters/aws/opensearch-transport.js';
import { describeSearchIndexContract } from './search-index.contract.js';

const url = process.env.OPENSEARCH_URL;
const SKIPPED = 'OpenSearch contract suite skipped: set OPENSEARCH_URL to run it';

if (url === undefined || url === '') {
  console.log(SKIPPED);
  describe('SearchIndex contract: OpenSearch', () => {
    it.skip(SKIPPED, () => {});
  });
} else {
  const signed = process.env.OPENSEARCH_AUTH === 'aws-sigv4';
  const transport = createOpenSearchTransport({
    url,
    auth: signed ? 'aws-sigv4' : 'none',
    ...(signed ? { region: process.env.AWS_REGION ?? '' } : {}),
  });
  const run = `contract-${Date.now().toString(36)}-${process.pid}`;
  const created: OpenSearchSearchIndex[] = [];

  describeSearchIndexContract('OpenSearch', async () => {
    const name = `${run}-${created.length + 1}`;
    const index = new OpenSearchSearchIndex({ transport, alias: `${name}-alias`, index: name, refresh: 'wait_for' });
    await index.createIndex();
    created.push(index);
    return index;
  });

  afterAll(async () => {
    await Promise.all(created.map((index) => index.deleteIndex()));
  });
}
