/**
 * What the handlers and the local gateway print, captured from stdout/stderr: every log line of a request carries its
 * correlation fields, one `request completed` line closes it, and the domain metrics come out as CloudWatch EMF
 * documents (uploads accepted and rejected by reason, deployment results by action and cause, search latency) or, with
 * LOG_FORMAT=text, as readable lines. The real handlers run on DynamoDB Local and s3rver and get the caller as API
 * Gateway's JWT authorizer hands it (withJwtAuthorizer); token failures are counted where tokens are refused, by the
 * local gateway, which verifies them against a JWKS served on 127.0.0.1.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, S3Event } from 'aws-lambda';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import JSZip from 'jszip';
import S3rver from 's3rver';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { scenarioList } from '../../../functions/contract/routes/scenarios.js';
import { search as searchRoute } from '../../../functions/contract/routes/search.js';
import { requestUploadSlot } from '../../../functions/core/scenarios/presigned-upload.js';
import type { Principal } from '../../../functions/core/shared/principal.js';
import { type DynamoDbLocal, startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { createApiServer } from '../../../functions/local/http-gateway.js';
import { LOCAL_BUCKET, LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { toS3Event } from '../../../functions/local/s3-events.js';
import { buildDemoScenarioArchive, DEMO_SCENARIOS, seedDemoData } from '../../../functions/local/seed.js';
import { ensureTables } from '../../../functions/local/tables.js';
import { services } from '../../../functions/platform/composition/services.js';
import { jsonResponse, routeHandler } from '../../../functions/platform/http.js';
import { logger } from '../../../functions/platform/logger.js';
import { lambdaContext } from '../../support/lambda-context.js';
import { withJwtAuthorizer } from '../access/jwt-authorizer.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'device-scenario-service';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type Emf = Record<string, unknown> & {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
};

let directory: string;
let dynamo: DynamoDbLocal;
let s3: S3rver;
let jwks: Server;
let signingKey: Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let upload: Handler;
let deploy: Handler;
let search: Handler;
let archiveUploaded: (event: S3Event, context: Context) => Promise<void>;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'observability-'));
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  signingKey = privateKey;
  const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
  jwks = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done));
  dynamo = await startDynamoDbLocal({ dataDirectory: join(directory, 'dynamodb'), port: await freePort() });
  const s3Port = await freePort();
  s3 = new S3rver({
    address: '127.0.0.1',
    port: s3Port,
    directory: join(directory, 's3'),
    silent: true,
    configureBuckets: [{ name: LOCAL_BUCKET }],
  });
  await s3.run();
  Object.assign(process.env, {
    JWT_ISSUER: ISSUER,
    JWT_AUDIENCE: AUDIENCE,
    JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
    COMPANIES_TABLE: LOCAL_TABLES.companies,
    DEVICES_TABLE: LOCAL_TABLES.devices,
    SCENARIOS_TABLE: LOCAL_TABLES.scenarios,
    DEPLOYMENTS_TABLE: LOCAL_TABLES.deployments,
    PRESENCE_TABLE: LOCAL_TABLES.presence,
    ROLLOUTS_TABLE: LOCAL_TABLES.rollouts,
    COMMANDS_TABLE: LOCAL_TABLES.commands,
    WEBHOOKS_TABLE: LOCAL_TABLES.webhooks,
    ALERTS_TABLE: LOCAL_TABLES.alerts,
    API_CLIENTS_TABLE: LOCAL_TABLES.apiClients,
    IDEMPOTENCY_TABLE: LOCAL_TABLES.idempotency,
    ARCHIVE_BUCKET: LOCAL_BUCKET,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    S3_ENDPOINT: `http://127.0.0.1:${s3Port}`,
    AWS_REGION: 'us-east-1',
    LOCAL_EVENTS_FILE: join(directory, 'events.jsonl'),
    CURSOR_SIGNING_KEY: 'ab'.repeat(32),
    SEARCH_ENGINE: 'embedded',
  });
  const admin = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  await ensureTables(admin, LOCAL_TABLES);
  admin.destroy();
  await seedDemoData(services());
  upload = (await import('../../../functions/handlers/scenarios-upload.js')).handler as unknown as Handler;
  deploy = (await import('../../../functions/handlers/deployments-execute.js')).handler as unknown as Handler;
  search = (await import('../../../functions/handlers/search.js')).handler as unknown as Handler;
  archiveUploaded = (await import('../../../functions/handlers/scenario-archive-uploaded.js')).handler as unknown as typeof archiveUploaded;
}, 120_000);

afterAll(async () => {
  services().dynamoDb.destroy();
  services().s3.destroy();
  await s3?.close();
  await dynamo?.stop();
  await new Promise((done) => jwks?.close(done));
  await rm(directory, { recursive: true, force: true });
});

afterEach(() => {
  vi.restoreAllMocks();
  delete process.env.LOG_FORMAT;
});

/** Runs `action` and returns every line it printed on stdout and stderr. */
async function printed(action: () => Promise<unknown>): Promise<string[]> {
  let output = '';
  const capture = (chunk: unknown) => {
    output += typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
    return true;
  };
  vi.spyOn(process.stdout, 'write').mockImplementation(capture);
  vi.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    await action();
  } finally {
    vi.restoreAllMocks();
  }
  return output.split('\n').filter((line) => line !== '');
}

const json = (lines: string[]) => lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
const logLines = (lines: string[]) => json(lines).filter((line) => !('_aws' in line));
const emf = (lines: string[]) => json(lines).filter((line): line is Emf => '_aws' in line);

/** The EMF documents of metric `name`, as `{ value, dimensions }` (the `service` dimension left out). */
function metric(lines: string[], name: string): { value: unknown; dimensions: Record<string, unknown> }[] {
  return emf(lines)
    .filter((document) => document._aws.CloudWatchMetrics.some((directive) => directive.Metrics.some((entry) => entry.Name === name)))
    .map((document) => {
      const [directive] = document._aws.CloudWatchMetrics;
      expect(directive?.Namespace).toBe('DeviceScenarioService');
      const names = (directive?.Dimensions.flat() ?? []).filter((dimension) => dimension !== 'service');
      return { value: document[name], dimensions: Object.fromEntries(names.map((dimension) => [dimension, document[dimension]])) };
    });
}

/** The claims of alice's token (a member of acme) holding `scope`, as the JWT authorizer hands them to a handler. */
const alice = (scope: string): JWTPayload => ({ sub: 'alice', companies: ['acme'], scope });

async function token(claims: { scope: string; expiresAt?: number; companies?: string[] | undefined }): Promise<string> {
  return new SignJWT({
    ...('companies' in claims ? (claims.companies === undefined ? {} : { companies: claims.companies }) : { companies: ['acme'] }),
    scope: claims.scope,
  })
    .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setSubject('alice')
    .setIssuedAt()
    .setExpirationTime(claims.expiresAt ?? '1h')
    .sign(signingKey);
}

let requests = 0;
function context(): Context {
  return lambdaContext(`lambda-${requests}`);
}

/**
 * The event API Gateway hands a route's function; with `claims`, the caller's verified token in the JWT authorizer
 * context (without, as if the function were invoked around the authorizer).
 */
function event(
  method: 'GET' | 'POST',
  path: string,
  rawPath: string,
  extra: { body?: Buffer; query?: string; headers?: Record<string, string>; claims?: JWTPayload } = {},
): APIGatewayProxyEventV2 {
  requests += 1;
  const now = new Date();
  const companyId = /^\/companies\/([^/]+)/.exec(rawPath)?.[1];
  const unauthorized: APIGatewayProxyEventV2 = {
    version: '2.0',
    routeKey: `${method} ${path}`,
    rawPath,
    rawQueryString: extra.query ?? '',
    headers: extra.headers ?? {},
    ...(companyId === undefined ? {} : { pathParameters: { companyId } }),
    requestContext: {
      accountId: 'test',
      apiId: 'main',
      domainName: 'localhost',
      domainPrefix: 'localhost',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: `gateway-${requests}`,
      routeKey: `${method} ${path}`,
      stage: '$default',
      time: now.toUTCString(),
      timeEpoch: now.getTime(),
    },
    ...(extra.body === undefined ? {} : { body: extra.body.toString('base64') }),
    isBase64Encoded: extra.body !== undefined,
  };
  return extra.claims === undefined ? unauthorized : withJwtAuthorizer(unauthorized, extra.claims);
}

function uploadEvent(archive: Uint8Array): APIGatewayProxyEventV2 {
  const body = Buffer.concat([
    Buffer.from(
      '--boundary\r\nContent-Disposition: form-data; name="payload"; filename="scenario.zip"\r\nContent-Type: application/zip\r\n\r\n',
    ),
    Buffer.from(archive),
    Buffer.from('\r\n--boundary--\r\n'),
  ]);
  return event('POST', '/companies/{companyId}/resources/scenarios', '/companies/acme/resources/scenarios', {
    body,
    headers: { 'content-type': 'multipart/form-data; boundary=boundary' },
    claims: alice('scenarios:write'),
  });
}

async function archiveWithoutManifest(): Promise<Uint8Array> {
  const zip = new JSZip();
  zip.file('resources/assets/index.html', '<h1>no scenario.json</h1>');
  return zip.generateAsync({ type: 'uint8array' });
}

describe('log lines', () => {
  it("carry the request id, route, company and caller on every line of the request, and end with one 'request completed' line", async () => {
    const handler = routeHandler(scenarioList, async () => {
      logger.info('working on it');
      return jsonResponse(200, {});
    }) as unknown as Handler;
    const request = event('GET', '/companies/{companyId}/resources/scenarios', '/companies/acme/resources/scenarios', {
      claims: alice('scenarios:read'),
    });
    const lines = logLines(await printed(() => handler(request, context())));
    expect(lines.map((line) => line.message)).toEqual(['working on it', 'request completed']);
    for (const line of lines) {
      expect(line).toMatchObject({
        requestId: request.requestContext.requestId,
        route: 'ScenarioList',
        company: 'acme',
        caller: 'alice',
        function_request_id: expect.any(String),
      });
    }
    expect(lines[1]).toMatchObject({
      method: 'GET',
      path: '/companies/acme/resources/scenarios',
      status: 200,
      latencyMs: expect.any(Number),
    });
    // The next request starts clean: the keys of this one were cleared. It reached the function without the JWT
    // authorizer's context: refused, and not counted as a token failure (on AWS the access log counts refused tokens).
    const output = await printed(() =>
      handler(event('GET', '/companies/{companyId}/resources/scenarios', '/companies/globex/resources/scenarios'), context()),
    );
    const anonymous = logLines(output);
    expect(anonymous).toHaveLength(1);
    expect(anonymous[0]).toMatchObject({ status: 401, company: 'globex' });
    expect(anonymous[0]).not.toHaveProperty('caller');
    expect(emf(output)).toEqual([]);
  });

  it('print as one readable line per request with LOG_FORMAT=text, without EMF documents or JSON', async () => {
    process.env.LOG_FORMAT = 'text';
    const lines = await printed(async () => upload(uploadEvent(await archiveWithoutManifest()), context()));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}POST \/companies\/acme\/resources\/scenarios 422 \d+ ms company=acme caller=alice$/,
    );
  });
});

describe('metrics (EMF)', () => {
  it('count a 201 direct upload as accepted, a 422 and a 409 as rejected with their reason', async () => {
    const archive = await buildDemoScenarioArchive(DEMO_SCENARIOS[0], '7.0.0');
    const accepted = await printed(async () => expect((await upload(uploadEvent(archive), context())).statusCode).toBe(201));
    expect(metric(accepted, 'UploadsAccepted')).toEqual([{ value: 1, dimensions: { channel: 'direct' } }]);
    expect(metric(accepted, 'UploadsRejected')).toEqual([]);
    const invalid = await printed(async () =>
      expect((await upload(uploadEvent(await archiveWithoutManifest()), context())).statusCode).toBe(422),
    );
    expect(metric(invalid, 'UploadsRejected')).toEqual([{ value: 1, dimensions: { channel: 'direct', reason: 'invalid-archive' } }]);
    const again = await printed(async () => expect((await upload(uploadEvent(archive), context())).statusCode).toBe(409));
    expect(metric(again, 'UploadsRejected')).toEqual([{ value: 1, dimensions: { channel: 'direct', reason: 'version-exists' } }]);
    expect(metric([...accepted, ...invalid, ...again], 'UploadsAccepted')).toHaveLength(1);
  });

  it('count presigned uploads as accepted when stored and rejected with the reason of the slot', async () => {
    const principal: Principal = { subject: 'alice', companies: ['acme'], scopes: new Set(['scenarios:write']) };
    const arrive = async (archive: Uint8Array) => {
      const slot = await requestUploadSlot(services(), principal, 'acme');
      const key = `uploads/acme/${slot.uploadId}.zip`;
      await services().archives.put(key, archive, 'application/zip');
      const record = {
        eventName: 'ObjectCreated:Put',
        eventTime: new Date().toISOString(),
        s3: { bucket: { name: LOCAL_BUCKET }, object: { key, size: archive.byteLength, eTag: 'e', sequencer: '1' } },
      };
      return printed(() => archiveUploaded(toS3Event(record, 'us-east-1'), context()));
    };
    const stored = await arrive(await buildDemoScenarioArchive(DEMO_SCENARIOS[0], '8.0.0'));
    expect(metric(stored, 'UploadsAccepted')).toEqual([{ value: 1, dimensions: { channel: 'presigned' } }]);
    const rejected = await arrive(await archiveWithoutManifest());
    expect(metric(rejected, 'UploadsRejected')).toEqual([{ value: 1, dimensions: { channel: 'presigned', reason: 'invalid-archive' } }]);
    expect(metric(rejected, 'UploadsAccepted')).toEqual([]);
    // The event handler logs with the Lambda context too.
    expect(logLines(rejected)).toContainEqual(
      expect.objectContaining({ message: 'Processed uploaded archive', outcome: 'REJECTED', function_name: 'test' }),
    );
  });

  it('count the results of a deployment request by action and cause, one document per combination; a dry run counts nothing', async () => {
    const entry = (device: string, action: 'DEPLOY' | 'UNDEPLOY') => ({
      target: { type: 'DEVICE', id: device, subId: null },
      what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' },
      action,
    });
    const body = JSON.stringify({
      requests: [
        entry('acme-kiosk-0001', 'DEPLOY'),
        entry('acme-kiosk-9998', 'DEPLOY'),
        entry('acme-kiosk-9999', 'DEPLOY'),
        entry('acme-kiosk-0002', 'UNDEPLOY'),
      ],
    });
    const send = async (query = '') => {
      const headers = { 'content-type': 'application/json' };
      return printed(async () => {
        const response = await deploy(
          event('POST', '/companies/{companyId}/resources/deployments', '/companies/acme/resources/deployments', {
            body: Buffer.from(body),
            headers,
            query,
            claims: alice('deployments:write'),
          }),
          context(),
        );
        expect(response.statusCode).toBe(200);
      });
    };
    expect(metric(await send('dryRun=true'), 'DeploymentResults')).toEqual([]);
    const counts = metric(await send(), 'DeploymentResults');
    expect(counts).toHaveLength(3);
    expect(counts).toEqual(
      expect.arrayContaining([
        { value: 1, dimensions: { action: 'DEPLOY', cause: 'SUCCESS' } },
        { value: 2, dimensions: { action: 'DEPLOY', cause: 'TARGET_NOT_FOUND' } },
        { value: 1, dimensions: { action: 'UNDEPLOY', cause: 'ALREADY_UNDEPLOYED' } },
      ]),
    );
  });

  it('measure the latency of a search in milliseconds, with no company or caller dimension', async () => {
    const lines = await printed(async () =>
      expect(
        (await search(event('GET', '/resources/search', '/resources/search', { claims: alice('search:read') }), context())).statusCode,
      ).toBe(200),
    );
    const [latency] = emf(lines).filter((document) => 'SearchLatency' in document);
    expect(latency?._aws.CloudWatchMetrics[0]?.Metrics).toEqual([{ Name: 'SearchLatency', Unit: 'Milliseconds' }]);
    expect(latency?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service']]);
    expect(latency?.SearchLatency).toBeGreaterThanOrEqual(0);
    const completed = logLines(lines).find((line) => line.message === 'request completed');
    expect(completed).toMatchObject({ route: 'Search', status: 200, caller: 'alice' });
  });

  it('print nothing about metrics for a request that records none', async () => {
    const handler = routeHandler(scenarioList, async () => jsonResponse(200, {})) as unknown as Handler;
    const lines = await printed(() =>
      handler(
        event('GET', '/companies/{companyId}/resources/scenarios', '/companies/acme/resources/scenarios', {
          claims: alice('scenarios:read'),
        }),
        context(),
      ),
    );
    expect(emf(lines)).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/metrics/i);
  });
});

describe('token failures (local gateway)', () => {
  let gateway: Server;
  let base: string;

  beforeAll(async () => {
    gateway = createApiServer('main', [searchRoute], resolve(import.meta.dirname, '../../..'), () => undefined);
    await new Promise<void>((done) => gateway.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((done) => gateway?.close(done));
  });

  /** Sends a search with `authorization` to the gateway; returns the answer's status and every line printed meanwhile. */
  async function searchThroughGateway(authorization: string | undefined): Promise<{ status: number; lines: string[] }> {
    let status = 0;
    const lines = await printed(async () => {
      const response = await fetch(`${base}/resources/search`, { headers: authorization === undefined ? {} : { authorization } });
      await response.arrayBuffer();
      status = response.status;
    });
    return { status, lines };
  }

  /** Each refused token, its reason, and the Authorization header that carries it (none for a missing one). */
  const refusals: [string, string, () => Promise<string | undefined>][] = [
    ['missing', 'missing', async () => undefined],
    ['non-Bearer', 'malformed', async () => 'Basic YWxpY2U6cGFzc3dvcmQ='],
    ['unsigned (alg none)', 'invalid', async () => 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.'],
    ['signed but company-less', 'invalid', async () => `Bearer ${await token({ scope: 'search:read', companies: undefined })}`],
    ['expired', 'expired', async () => `Bearer ${await token({ scope: 'search:read', expiresAt: Math.floor(Date.now() / 1000) - 60 })}`],
  ];

  it.each(refusals)(
    'count a %s token the gateway refuses (401) once, reason %s, as an EMF document',
    async (_token, reason, authorization) => {
      const { status, lines } = await searchThroughGateway(await authorization());
      expect(status).toBe(401);
      expect(metric(lines, 'TokenFailures')).toEqual([{ value: 1, dimensions: { reason } }]);
      // The handler never ran: no request line, no search latency.
      expect(logLines(lines).filter((line) => line.message === 'request completed')).toEqual([]);
      expect(metric(lines, 'SearchLatency')).toEqual([]);
    },
  );

  it("count nothing for a valid token without the route's scope (403: the token was not refused, the request was)", async () => {
    const { status, lines } = await searchThroughGateway(`Bearer ${await token({ scope: 'scenarios:read' })}`);
    expect(status).toBe(403);
    expect(emf(lines)).toEqual([]);
  });

  it('print each token failure as one readable DEBUG line with LOG_FORMAT=text, as every local metric', async () => {
    process.env.LOG_FORMAT = 'text';
    const level = logger.getLevelName();
    logger.setLogLevel('DEBUG');
    try {
      const { status, lines } = await searchThroughGateway('Basic YWxpY2U6cGFzc3dvcmQ=');
      expect(status).toBe(401);
      expect(lines).toEqual([expect.stringMatching(/^\d\d:\d\d:\d\d\.\d{3} DEBUG metric TokenFailures=1 Count reason=malformed$/)]);
    } finally {
      logger.setLogLevel(level);
    }
  });
});
