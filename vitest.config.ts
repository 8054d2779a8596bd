import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // The AWS SDK warns once per process that its 2027 releases need Node 22; we support Node >= 20 (package.json
    // engines) and pin SDK majors that run on it, so the warning is noise in every test file's output.
    // No X-Ray daemon in tests: the Tracer (off outside Lambda anyway) is switched off explicitly.
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', POWERTOOLS_TRACE_ENABLED: 'false' },
  },
});
