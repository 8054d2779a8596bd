/** How the OpenSearch suites reach the OpenSearch of the run (test/opensearch/global-setup.ts provides its address). */

/**
 * The transport settings of the OpenSearch the suites use: OPENSEARCH_AUTH=aws-sigv4 signs every request with the
 * caller's AWS credentials for AWS_REGION (an Amazon OpenSearch Service domain); unsigned otherwise.
 */
export function openSearchSettings(url: string): { url: string; auth: 'none' } | { url: string; auth: 'aws-sigv4'; region: string } {
  return process.env.OPENSEARCH_AUTH === 'aws-sigv4'
    ? { url, auth: 'aws-sigv4', region: process.env.AWS_REGION ?? '' }
    : { url, auth: 'none' };
}
