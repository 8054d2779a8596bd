/**
 * A backend that is unreachable, failing or throttling answers 503 problem+json with Retry-After on real route
 * handlers, never 500: DynamoDB on a port where nothing listens (a real connection refusal), DynamoDB answering
 * errors (aws-sdk-client-mock on the handlers' own client), the idempotency store (Powertools wraps the SDK's error),
 * and an endpoint that accepts connections but never answers (the SDK clients' timeouts). A genuine bug stays 500.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer, type Socket, type Server as TcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InternalServerError, ProvisionedThroughputExceededException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDocumentClient } from '../../../functions/adapters/aws/clients.js';
import { USERS_FILE } from '../../../functions/adapters/embedded/local-identity-provider.js';
import { freePort } from '../../../functions/local/free-port.js';
import { services } from '../../../functions/platform/composition/services.js';
import { jsonResponse, routeHandler } from '../../../functions/platform/http.js';
import { logger } from '../../../functions/platform/logger.js';
import { httpApiEvent } from '../../support/http-event.js';
import { lambdaContext } from '../../support/lambda-context.js';
import { TEST_ROUTE } from '../../support/route-input.js';
import { withJwtAuthorizer } from '../access/jwt-authorizer.js';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
let listDeployments: Handler;
let executeDeployments: Handler;
let tokenEndpoint: Handler;
let authDirectory: string | undefined;

beforeAll(async () => {
  // Nothing listens on this port: every DynamoDB call is refused, as when DynamoDB Local has died.
  const deadPort = await freePort();
  Object.assign(process.env, {
    COMPANIES_TABLE: 'companies',
    DEVICES_TABLE: 'devices',
    SCENARIOS_TABLE: 'scenarios',
    DEPLOYMENTS_TABLE: 'deployments',
    PRESENCE_TABLE: 'presence',
    ROLLOUTS_TABLE: 'rollouts',
    COMMANDS_TABLE: 'commands',
    WEBHOOKS_TABLE: 'webhooks',
    ALERTS_TABLE: 'alerts',
    API_CLIENTS_TABLE: 'api-clients',
    IDEMPOTENCY_TABLE: 'idempotency',
    CLIENT_FAILURES_TABLE: 'client-failures',
    ARCHIVE_BUCKET: 'archives',
    LOCAL_EVENTS_FILE: '/dev/null',
    CURSOR_SIGNING_KEY: 'ab'.repeat(32),
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${deadPort}`,
    S3_ENDPOINT: `http://127.0.0.1:${deadPort}`,
    AWS_REGION: 'us-east-1',
  });
  // The local token endpoint's issuer: an empty users file in a folder of its own.
  authDirectory = await mkdtemp(join(tmpdir(), 'dss-unavailable-'));
  await writeFile(join(authDirectory, USERS_FILE), '[]');
  Object.assign(process.env, { LOCAL_AUTH_DIR: authDirectory, JWT_ISSUER: 'http://127.0.0.1:3002', JWT_AUDIENCE: 'test' });
  tokenEndpoint = (await import('../../../functions/handlers/auth-token.js')).handler as unknown as Handler;
  listDeployments = (await import('../../../functions/handlers/deployments-list.js')).handler as unknown as Handler;
  executeDeployments = (await import('../../../functions/handlers/deployments-execute.js')).handler as unknown as Handler;
});

afterAll(async () => {
  if (authDirectory !== undefined) await rm(authDirectory, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
});

function event(routeKey: string, rawPath: string, extra: { body?: string; headers?: Record<string, string> } = {}): APIGatewayProxyEventV2 {
  // As the gateway hands it over once alice's token is verified.
  return withJwtAuthorizer(
    httpApiEvent(routeKey, rawPath, {
      headers: { authorization: 'Bearer verified.by.gateway', ...(extra.headers ?? {}) },
      pathParameters: { companyId: 'acme' },
      ...(extra.body === undefined ? {} : { body: extra.body }),
    }),
    { sub: 'alice', companies: ['acme'], scope: 'deployments:read deployments:write' },
  );
}

const listEvent = () => event('GET /companies/{companyId}/resources/DEVICE/deployments', '/companies/acme/resources/DEVICE/deployments');

/** Asserts a 503 problem with `Retry-After: retryAfter` and a detail that says to retry. */
function expectUnavailable(result: APIGatewayProxyStructuredResultV2, retryAfter: string): void {
  expect(result.statusCode, result.body).toBe(503);
  expect(result.headers?.['content-type']).toBe('application/problem+json');
  expect(result.headers?.['Retry-After']).toBe(retryAfter);
  const body = JSON.parse(result.body ?? '') as Record<string, unknown>;
  expect(body).toMatchObject({ status: 503, title: 'Service Unavailable', instance: expect.any(String) });
  expect(body.detail).toMatch(/retry/i);
}

describe('a backend that cannot serve the request answers 503 with Retry-After', () => {
  it('GET active deployments with DynamoDB refusing connections: 503, Retry-After 5, logged once as a warning', async () => {
    const warned = vi.spyOn(logger, 'warn');
    const failed = vi.spyOn(logger, 'error');
    const started = Date.now();
    const result = await listDeployments(listEvent(), lambdaContext());
    expectUnavailable(result, '5');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(warned).toHaveBeenCalledTimes(1);
    expect(failed).not.toHaveBeenCalled();
  });

  it('POST deployments with an Idempotency-Key while the idempotency table is unreachable: 503', async () => {
    const body = JSON.stringify({ requests: [] });
    const result = await executeDeployments(
      event('POST /companies/{companyId}/resources/deployments', '/companies/acme/resources/deployments', {
        body,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'key-1' },
      }),
      lambdaContext(),
    );
    expectUnavailable(result, '5');
  });

  it.each([
    [
      'ProvisionedThroughputExceededException',
      () => new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } }),
      '2',
    ],
    [
      'ThrottlingException',
      () =>
        Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), {
          name: 'ThrottlingException',
          $fault: 'client',
          $metadata: { httpStatusCode: 400 },
        }),
      '2',
    ],
    [
      'a throttled transaction',
      () =>
        new TransactionCanceledException({
          message: 'Transaction cancelled',
          $metadata: { httpStatusCode: 400 },
          CancellationReasons: [{ Code: 'None' }, { Code: 'ThrottlingError' }],
        }),
      '2',
    ],
    ['InternalServerError', () => new InternalServerError({ message: 'Internal server error', $metadata: { httpStatusCode: 500 } }), '5'],
    [
      'an unknown 5xx ($fault server)',
      () =>
        Object.assign(new Error('Service Unavailable'), {
          name: 'ServiceUnavailable',
          $fault: 'server',
          $metadata: { httpStatusCode: 503 },
        }),
      '5',
    ],
    [
      'a TimeoutError',
      () =>
        Object.assign(new Error('a request has exceeded the configured 5000 ms requestTimeout.'), {
          name: 'TimeoutError',
          code: 'ETIMEDOUT',
          $metadata: { attempts: 3 },
        }),
      '5',
    ],
    ['socket hang up', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }), '5'],
  ])('GET active deployments when DynamoDB rejects with %s: 503', async (_name, error, retryAfter) => {
    const dynamo = mockClient(services().dynamoDb);
    try {
      dynamo.onAnyCommand().rejects(error());
      expectUnavailable(await listDeployments(listEvent(), lambdaContext()), retryAfter);
    } finally {
      dynamo.restore();
    }
  });

  /** POST /token with the client credentials grant, a wrong secret. */
  const wrongSecret = () => {
    const request = event('POST /token', '/token', {
      body: 'grant_type=client_credentials&client_id=acme~kiosk-1&client_secret=wrong',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    return tokenEndpoint({ ...request, pathParameters: {} }, lambdaContext());
  };

  it("POST /token (client credentials) while the failed attempts' table throttles: 503 problem, Retry-After 2, every time", async () => {
    const dynamo = mockClient(services().dynamoDb);
    try {
      dynamo
        .on(UpdateCommand, { TableName: 'client-failures' })
        .rejects(new ProvisionedThroughputExceededException({ message: 'Rate exceeded', $metadata: { httpStatusCode: 400 } }));
      dynamo.on(GetCommand, { TableName: 'devices' }).resolves({});
      // More than the verification gate admits at once: each failed attempt leaves it (else the last would be the
      // gate's own 503, Retry-After 1).
      for (let attempt = 0; attempt < 70; attempt += 1) expectUnavailable(await wrongSecret(), '2');
    } finally {
      dynamo.restore();
    }
  });

  it.each(['ResourceNotFoundException', 'AccessDeniedException'])(
    "POST /token (client credentials) when the failed attempts' table cannot be used (%s): 503 problem, Retry-After 5, no device read",
    async (name) => {
      const dynamo = mockClient(services().dynamoDb);
      try {
        dynamo
          .on(UpdateCommand, { TableName: 'client-failures' })
          .rejects(Object.assign(new Error(`${name} on client-failures`), { name, $fault: 'client', $metadata: { httpStatusCode: 400 } }));
        dynamo.on(GetCommand, { TableName: 'devices' }).resolves({});
        expectUnavailable(await wrongSecret(), '5');
        expect(dynamo.commandCalls(GetCommand)).toHaveLength(0);
      } finally {
        dynamo.restore();
      }
    },
  );

  it('a genuine bug (TypeError) under the same handler is still 500, logged as an error', async () => {
    const failed = vi.spyOn(logger, 'error');
    const dynamo = mockClient(services().dynamoDb);
    try {
      dynamo.onAnyCommand().rejects(new TypeError("Cannot read properties of undefined (reading 'Items')"));
      const result = await listDeployments(listEvent(), lambdaContext());
      expect(result.statusCode).toBe(500);
      expect(result.headers?.['Retry-After']).toBeUndefined();
      expect(failed).toHaveBeenCalledTimes(1);
    } finally {
      dynamo.restore();
    }
  });
});

describe('the SDK clients fail fast on an endpoint that does not answer', () => {
  let silent: TcpServer;
  const sockets = new Set<Socket>();

  beforeAll(async () => {
    // Accepts connections and never answers, like a JVM that hangs (or is stopped).
    silent = createTcpServer((socket) => {
      sockets.add(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((done) => silent.close(done));
  });

  it('a DynamoDB call gives up within 20 s and answers 503 instead of holding the request', async () => {
    const client = createDocumentClient(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    const handler = routeHandler(TEST_ROUTE, async () => {
      await client.send(new GetCommand({ TableName: 'devices', Key: { company: 'acme', sk: 'DEVICE#x' } }));
      return jsonResponse(200, {});
    });
    const started = Date.now();
    try {
      const result = (await handler(listEvent(), lambdaContext())) as APIGatewayProxyStructuredResultV2;
      expectUnavailable(result, '5');
      expect(Date.now() - started).toBeLessThan(20_000);
    } finally {
      client.destroy();
    }
  }, 40_000);
});
