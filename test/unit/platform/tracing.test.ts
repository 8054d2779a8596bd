import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it, vi } from 'vitest';

/** Loads observability.ts afresh with POWERTOOLS_TRACE_ENABLED set to `value` (undefined: unset, as on Lambda). */
async function observabilityWith(value: string | undefined) {
  vi.resetModules();
  if (value === undefined) vi.stubEnv('POWERTOOLS_TRACE_ENABLED', undefined as unknown as string);
  else vi.stubEnv('POWERTOOLS_TRACE_ENABLED', value);
  return import('../../../functions/platform/observability.js');
}

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('tracing', () => {
  it('is on where POWERTOOLS_TRACE_ENABLED is unset (Lambda): the handler stack traces and SDK clients are captured', async () => {
    // What Lambda sets: Powertools traces only inside Lambda.
    vi.stubEnv('AWS_EXECUTION_ENV', 'AWS_Lambda_nodejs24.x');
    vi.stubEnv('AWS_LAMBDA_FUNCTION_NAME', 'SearchFunction');
    const { loadedTracer, traced } = await observabilityWith(undefined);
    const client = new DynamoDBClient({ region: 'us-east-1' });
    const middlewareCount = client.middlewareStack.identify().length;
    traced(client);
    expect((await loadedTracer())?.isTracingEnabled()).toBe(true);
    await Promise.resolve();
    expect(client.middlewareStack.identify().length).toBeGreaterThan(middlewareCount);
  });

  it('is off with POWERTOOLS_TRACE_ENABLED=false (local runtime, tests): no tracer, clients untouched', async () => {
    const { loadedTracer, traced } = await observabilityWith('false');
    const client = new DynamoDBClient({ region: 'us-east-1' });
    const middlewareCount = client.middlewareStack.identify().length;
    expect(traced(client)).toBe(client);
    expect(await loadedTracer()).toBeUndefined();
    await Promise.resolve();
    expect(client.middlewareStack.identify().length).toBe(middlewareCount);
  });
});
