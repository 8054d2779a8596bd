import { defineConfig } from 'vitest/config';

/**
 * Four projects, so that the fast loop runs alone: `npm run test:unit` (unit and contract suites, in-process, no
 * service started), `npm run test:opensearch` (the contract and parity suites on a real OpenSearch node),
 * `npm run test:e2e` (starts `bin/local.ts` and DynamoDB Local), `npm run test:infra` (CDK synthesis). `npm test`
 * runs all four. Settings shared by all live at the root and each project extends them.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The AWS SDK warns once per process that its 2027 releases need Node 22; we support Node >= 20 (package.json
    // engines) and pin SDK majors that run on it, so the warning is noise in every test file's output.
    // No X-Ray daemon in tests: the Tracer (off outside Lambda anyway) is switched off explicitly.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_TRACE_ENABLED: 'false' },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'test/contract/**/*.test.ts'],
          exclude: ['test/contract/opensearch-*.test.ts'],
        },
      },
      // On a real OpenSearch node, started once for the project (or OPENSEARCH_URL's).
      {
        extends: true,
        test: {
          name: 'opensearch',
          include: ['test/contract/opensearch-*.test.ts', 'test/opensearch/**/*.test.ts'],
          globalSetup: ['test/opensearch/global-setup.ts'],
        },
      },
      { extends: true, test: { name: 'e2e', include: ['test/e2e/**/*.test.ts'], exclude: ['test/e2e/opensearch-*.test.ts'] } },
      // The search, reindex, rollout-by-query and console fleet journeys once more with the runtime on OpenSearch (one
      // node for the project; each service its own index), and the journeys only OpenSearch has.
      {
        extends: true,
        test: {
          name: 'e2e-opensearch',
          include: [
            'test/e2e/opensearch-*.test.ts',
            'test/e2e/docs-walkthrough.test.ts',
            'test/e2e/rollouts.test.ts',
            'test/e2e/console-fleet.test.ts',
          ],
          env: { SEARCH_ENGINE: 'opensearch' },
          globalSetup: ['test/opensearch/global-setup.ts'],
        },
      },
      { extends: true, test: { name: 'infra', include: ['test/infra/**/*.test.ts'] } },
    ],
  },
});
