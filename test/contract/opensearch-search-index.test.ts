/**
 * The SearchIndex contract suite against OpenSearch, when OPENSEARCH_URL is set (e.g. `http://localhost:9200`;
 * OPENSEARCH_AUTH=aws-sigv4 with AWS_REGION for an Amazon OpenSearch Service domain), through the official client.
 * Each test gets a fresh index created from the template; bulk writes use `refresh=wait_for` so they are visible
 * to the next search. The indexes of the run are deleted at the end.
 */
import { afterAll } from 'vitest';
import { OpenSearchSearchIndex } from '../../functions/adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport, type OpenSearchTransport } from '../../functions/adapters/aws/opensearch-transport.js';
import { describeSearchIndexContract } from './search-index.contract.js';

const url = process.env.OPENSEARCH_URL ?? '';
/** Why the suite is skipped, when it is: printed, and named in the skipped suite's title. */
const skipReason = url === '' ? 'set OPENSEARCH_URL to run it' : undefined;
if (skipReason !== undefined) console.log(`OpenSearch contract suite skipped: ${skipReason}`);

/** One transport for the run, made on the first index (none when the suite is skipped). */
let transport: OpenSearchTransport | undefined;
function openSearchTransport(): OpenSearchTransport {
  const signed = process.env.OPENSEARCH_AUTH === 'aws-sigv4';
  return createOpenSearchTransport({
    url,
    auth: signed ? 'aws-sigv4' : 'none',
    ...(signed ? { region: process.env.AWS_REGION ?? '' } : {}),
  });
}

const run = `contract-${Date.now().toString(36)}-${process.pid}`;
const created: OpenSearchSearchIndex[] = [];

describeSearchIndexContract(
  'OpenSearch',
  async () => {
    transport ??= openSearchTransport();
    const name = `${run}-${created.length + 1}`;
    const index = new OpenSearchSearchIndex({ transport, alias: `${name}-alias`, index: name, refresh: 'wait_for' });
    await index.createIndex();
    created.push(index);
    return index;
  },
  skipReason,
);

afterAll(async () => {
  await Promise.all(created.map((index) => index.deleteIndex()));
});
