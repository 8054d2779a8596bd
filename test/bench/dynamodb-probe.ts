/**
 * Benchmark probe, preloaded into the local runtime with `--import` by `deployments.ts --profile-deployments` (never
 * by product code): wraps `http.request` (which the AWS SDK's NodeHttpHandler resolves on first use) and records,
 * for every request carrying an `x-amz-target` header (DynamoDB and DynamoDB Streams), the operation, the time the
 * request was created, the time the response headers arrived and the time the response body ended, as absolute
 * epoch milliseconds (`performance.timeOrigin + performance.now()`, comparable across processes).
 *
 * On SIGUSR2 it writes the calls recorded since the previous signal as JSON to `BENCH_PROBE_FILE` (via a rename, so
 * the reader never sees a partial file) and forgets them.
 */
import { renameSync, writeFileSync } from 'node:fs';
import http from 'node:http';

/** One recorded call: operation (e.g. `PutItem`), created, headers received, body ended (epoch ms), HTTP status. */
export type ProbeCall = [operation: string, start: number, headers: number, end: number, status: number];

const file = process.env.BENCH_PROBE_FILE;
const now = () => performance.timeOrigin + performance.now();
let calls: ProbeCall[] = [];

function targetOf(options: unknown): string | undefined {
  if (typeof options !== 'object' || options === null || options instanceof URL) return undefined;
  const headers = (options as { headers?: Record<string, unknown> }).headers;
  const target = headers?.['x-amz-target'] ?? headers?.['X-Amz-Target'];
  return typeof target === 'string' ? (target.split('.').pop() ?? target) : undefined;
}

if (file !== undefined && file !== '') {
  const original = http.request;
  const wrapped = function (this: unknown, ...args: unknown[]) {
    const request = (original as (...parameters: unknown[]) => http.ClientRequest).apply(this, args);
    const operation = targetOf(args[0]) ?? targetOf(args[1]);
    if (operation !== undefined) {
      const start = now();
      request.once('response', (response: http.IncomingMessage) => {
        const headers = now();
        response.once('end', () => calls.push([operation, start, headers, now(), response.statusCode ?? 0]));
      });
    }
    return request;
  };
  (http as { request: unknown }).request = wrapped;
  process.on('SIGUSR2', () => {
    writeFileSync(`${file}.tmp`, JSON.stringify(calls));
    renameSync(`${file}.tmp`, file);
    calls = [];
  });
}
