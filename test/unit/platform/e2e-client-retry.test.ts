/**
 * The e2e harness's typed client (clientFor) sends a read the local runtime's admission control refused unprocessed
 * again after its Retry-After, and returns every other answer as it is: a test's polling read on a busy machine
 * sees the service's state, not the runtime protecting itself.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientFor, type LocalService } from '../../e2e/harness.js';

const USAGE = { quotaBytes: 5_242_880, usedBytes: 1_024, availableBytes: 5_241_856 };
const BUSY =
  'The main address (base_url) is serving as many requests as it admits (16 at once, 256 more waiting); this one was not processed. Retry after 1 s.';
const DOWN = 'The database cannot be reached. Retry after 5 s.';

let server: Server | undefined;

afterEach(async () => {
  await new Promise((done) => server?.close(done) ?? done(undefined));
  server = undefined;
});

/** A fake main address answering each request with the next of `answers` (the last one repeated); counts requests. */
async function serving(answers: readonly { status: number; detail?: string }[]): Promise<{ service: LocalService; seen: () => string[] }> {
  const seen: string[] = [];
  server = createServer((request: IncomingMessage, response) => {
    const answer = answers[Math.min(seen.length, answers.length - 1)] as { status: number; detail?: string };
    seen.push(`${request.method} ${request.headers.authorization}`);
    if (answer.status === 200) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(USAGE));
      return;
    }
    const problem = {
      type: 'https://device-scenario-service.dev/problems/service-unavailable',
      title: 'Service Unavailable',
      status: 503,
      detail: answer.detail,
    };
    response.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' }).end(JSON.stringify(problem));
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const service = {
    pid: 0,
    api: url,
    upload: 'http://127.0.0.1:1',
    auth: 'http://127.0.0.1:2',
    dataDirectory: '',
    output: () => '',
    stop: async () => {},
  };
  return { service, seen: () => seen };
}

const usage = (service: LocalService) =>
  clientFor(service, 'token').main.GET('/companies/{companyId}/resources/scenarios/usage', { params: { path: { companyId: 'acme' } } });

describe('the e2e client on a busy runtime', () => {
  it('sends a read the admission control refused again after Retry-After, and returns the answer that followed', async () => {
    const { service, seen } = await serving([{ status: 503, detail: BUSY }, { status: 200 }]);
    const started = performance.now();
    const answer = await usage(service);
    expect(answer.response.status).toBe(200);
    expect(answer.data).toEqual(USAGE);
    // The read sent again is the same, with its bearer token.
    expect(seen()).toEqual(['GET Bearer token', 'GET Bearer token']);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('returns a backend 503 as it is, without sending the read again', async () => {
    const { service, seen } = await serving([{ status: 503, detail: DOWN }, { status: 200 }]);
    const answer = await usage(service);
    expect(answer.response.status).toBe(503);
    expect(answer.error?.detail).toBe(DOWN);
    expect(seen()).toEqual(['GET Bearer token']);
  });
});
