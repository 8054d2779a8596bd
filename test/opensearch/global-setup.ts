/**
 * The `opensearch` test project's global setup: the OpenSearch node its suites run against, one for the whole run.
 * OPENSEARCH_URL (with OPENSEARCH_AUTH=aws-sigv4 and AWS_REGION for an Amazon OpenSearch Service domain) names an
 * existing one instead; otherwise a node is started here (functions/local/opensearch-node.ts) and stopped at the end.
 * The suites read the address with `inject('opensearchUrl')`.
 */
import type { TestProject } from 'vitest/node';
import { startOpenSearchNode } from '../../functions/local/opensearch-node.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** `http(s)://host:port` of the OpenSearch the suites use. */
    opensearchUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  const given = process.env.OPENSEARCH_URL;
  if (given !== undefined && given !== '') {
    project.provide('opensearchUrl', given);
    return undefined;
  }
  const node = await startOpenSearchNode({ log: (message) => process.stderr.write(`${message}\n`) });
  process.stderr.write(`OpenSearch ${node.version} for the tests on ${node.url} (heap ${node.heapMiB} MiB).\n`);
  project.provide('opensearchUrl', node.url);
  return () => node.stop();
}
