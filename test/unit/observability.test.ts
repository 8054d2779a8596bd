/**
 * What the handlers print, captured from stdout/stderr: every log line of a request carries its correlation fields,
 * one `request completed` line closes it, and the domain metrics come out as CloudWatch EMF documents (uploads
 * accepted and rejected by reason, deployment results by action and cause, token failures by reason, search latency).
 * The real handlers run on DynamoDB Local and s3rver; tokens are verified against a JWKS served on 127.0.0.1.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, S3Event } from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import JSZip from 'jszip';
import S3rver from 's3rver';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Principal } from '../../functions/core/principal.js';
import { requestUploadSlot } from '../../functions/core/scenarios/presigned-upload.js';
import { startDynamoDbLocal, type DynamoDbLocal } from '../../functions/local/dynamodb-local.js';
import { freePort } from '../../functions/local/free-port.js';
import { LOCAL_BUCKET, LOCAL_TABLES } from '../../functions/local/runtime.js';
import { toS3Event } from '../../functions/local/s3-events.js';
import { buildDemoScenarioArchive, DEMO_SCENARIOS, seedDemoData } from '../../functions/local/seed.js';
import { ensureTables } from '../../functions/local/tables.js';
import { services } from '../../functions/platform/composition.js';
import { scenarioList } from '../../functions/contract/routes/scenarios.js';
import { jsonResponse, routeHandler } from '../../functions/platform/http.js';
import { logger } from '../../functions/platform/logger.js';

const ISSUER = 'https://issuer.test';
const AUDIENCE = 'device-scenario-service';

type Handler = (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>;
type Emf = Record<string, unknown> & { _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] } };

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
  s3 = new S3rver({ address: '127.0.0.1', port: s3Port, directory: join(directory, 's3'), silent: true, configureBuckets: [{ name: LOCAL_BUCKET }] });
  await s3.run();
  Object.assign(process.env, {
    JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
    COMPANIES_TABLE: LOCAL_TABLES.companies, DEVICES_TABLE: LOCAL_TABLES.devices, SCENARIOS_TABLE: LOCAL_TABLES.scenarios,
    DEPLOYMENTS_TABLE: LOCAL_TABLES.deployments, IDEMPOTENCY_TABLE: LOCAL_TABLES.idempotency, ARCHIVE_BUCKET: LOCAL_BUCKET,
    DYNAMODB_ENDPOINT: dynamo.endpoint, S3_ENDPOINT: `http://127.0.0.1:${s3Port}`, AWS_REGION: 'us-east-1',
    LOCAL_EVENTS_FILE: join(directory, 'events.jsonl'), CURSOR_SIGNING_KEY: 'ab'.repeat(32), SEARCH_BACKEND: 'embedded',
  });
  const admin = new DynamoDBClient({ endpoint: dynamo.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  await ensureTables(admin, LOCAL_TABLES);
  admin.destroy();
  await seedDemoData(services());
  upload = (await import('../../functions/handlers/scenarios-upload.js')).handler as unknown as Handler;
  deploy = (await import('../../functions/handlers/deployments-execute.js')).handler as unknown as Handler;
  search = (await import('../../functions/handlers/search.js')).handler as unknown as Handler;
  archiveUploaded = (await import('../../functions/handlers/scenario-archive-uploaded.js')).handler as unknown as typeof archiveUploaded;
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

async function token(claims: { scope: string; expiresAt?: number }): Promise<string> {
  return new SignJWT({ companies: ['acme'], scope: claims.scope })
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
  return {
    callbackWaitsForEmptyEventLoop: false, functionName: 'test', functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:local:000000000000:function:test', memoryLimitInMB: '128', awsRequestId: `lambda-${requests}`,
    logGroupName: '/aws/lambda/test', logStreamName: 'local', getRemainingTimeInMillis: () => 30_000,
    done: () => undefined, fail: () => undefined, succeed: () => undefined,
  };
}

function event(method: 'GET' | 'POST', path: string, rawPath: string, extra: { body?: Buffer; query?: string; headers?: Record<string, string> } = {}): APIGatewayProxyEventV2 {
  requests += 1;
  const now = new Date();
  const companyId = /^\/companies\/([^/]+)/.exec(rawPath)?.[1];
  return {
    version: '2.0', routeKey: `${method} ${path}`, rawPath, rawQueryString: extra.query ?? '',
    headers: extra.headers ?? {},
    ...(companyId === undefined ? {} : { pathParameters: { companyId } }),
    requestContext: {
      accountId: 'test', apiId: 'main', domainName: 'localhost', domainPrefix: 'localhost',
      http: { method, path: rawPath, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
      requestId: `gateway-${requests}`, routeKey: `${method} ${path}`, stage: '$default', time: now.toUTCString(), timeEpoch: now.getTime(),
    },
    ...(extra.body === undefined ? {} : { body: extra.body.toString('base64') }),
    isBase64Encoded: extra.body !== undefined,
  };
}

async function uploadEvent(archive: Uint8Array): Promise<APIGatewayProxyEventV2> {
  const body = Buffer.concat([
    Buffer.from('--boundary\r\nContent-Disposition: form-data; name="payload"; filename="scenario.zip"\r\nContent-Type: application/zip\r\n\r\n'),
    Buffer.from(archive),
    Buffer.from('\r\n--boundary--\r\n'),
  ]);
  return event('POST', '/companies/{companyId}/resources/scenarios', '/companies/acme/resources/scenarios', {
    body, headers: { authorization: `Bearer ${await token({ scope: 'scenarios:write' })}`, 'content-type': 'multipart/form-data; boundary=boundary' },
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
      headers: { authorization: `Bearer ${await token({ scope: 'scenarios:read' })}` },
    });
    const lines = logLines(await printed(() => handler(request, context())));
    expect(lines.map((line) => line.message)).toEqual(['working on it', 'request completed']);
    for (const line of lines) {
      expect(line).toMatchObject({ requestId: request.requestContext.requestId, route: 'ScenarioList', company: 'acme', caller: 'alice', function_request_id: expect.any(String) });
    }
    expect(lines[1]).toMatchObject({ method: 'GET', path: '/companies/acme/resources/scenarios', status: 200, latencyMs: expect.any(Number) });
    // The next request starts clean: the keys of this one were cleared.
    const anonymous = logLines(await printed(() => handler(event('GET', '/companies/{companyId}/resources/scenarios', '/companies/globex/resources/scenarios'), context())));
    expect(anonymous).toHaveLength(1);
    expect(anonymous[0]).toMatchObject({ status: 401, company: 'globex' });
    expect(anonymous[0]).not.toHaveProperty('caller');
  });

  it('print as one readable line per request with LOG_FORMAT=text, without EMF documents or JSON', async () => {
    process.env.LOG_FORMAT = 'text';
    const lines = await printed(async () => upload(await uploadEvent(await archiveWithoutManifest()), context()));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  POST \/companies\/acme\/resources\/scenarios 422 \d+ ms company=acme caller=alice$/);
  });
});

describe('metrics (EMF)', () => {
  it('count a 201 direct upload as accepted, a 422 and a 409 as rejected with their reason', async () => {
    const archive = await buildDemoScenarioArchive(DEMO_SCENARIOS[0], '7.0.0');
    const accepted = await printed(async () => expect((await upload(await uploadEvent(archive), context())).statusCode).toBe(201));
    expect(metric(accepted, 'UploadsAccepted')).toEqual([{ value: 1, dimensions: { channel: 'direct' } }]);
    expect(metric(accepted, 'UploadsRejected')).toEqual([]);
    const invalid = await printed(async () => expect((await upload(await uploadEvent(await archiveWithoutManifest()), context())).statusCode).toBe(422));
    expect(metric(invalid, 'UploadsRejected')).toEqual([{ value: 1, dimensions: { channel: 'direct', reason: 'invalid-archive' } }]);
    const again = await printed(async () => expect((await upload(await uploadEvent(archive), context())).statusCode).toBe(409));
    expect(metric(again, 'UploadsRejected')).toEqual([{ value: 1, dimensions: { channel: 'direct', reason: 'version-exists' } }]);
    expect(metric([...accepted, ...invalid, ...again], 'UploadsAccepted')).toHaveLength(1);
  });

  it('count presigned uploads as accepted when stored and rejected with the reason of the slot', async () => {
    const principal: Principal = { subject: 'alice', companies: ['acme'], scopes: new Set(['scenarios:write']) };
    const arrive = async (archive: Uint8Array) => {
      const slot = await requestUploadSlot(services(), principal, 'acme');
      const key = `uploads/acme/${slot.uploadId}.zip`;
      await services().archives.put(key, archive, 'application/zip');
      const record = { eventName: 'ObjectCreated:Put', eventTime: new Date().toISOString(), s3: { bucket: { name: LOCAL_BUCKET }, object: { key, size: archive.byteLength, eTag: 'e', sequencer: '1' } } };
      return printed(() => archiveUploaded(toS3Event(record, 'us-east-1'), context()));
    };
    const stored = await arrive(await buildDemoScenarioArchive(DEMO_SCENARIOS[0], '8.0.0'));
    expect(metric(stored, 'UploadsAccepted')).toEqual([{ value: 1, dimensions: { channel: 'presigned' } }]);
    const rejected = await arrive(await archiveWithoutManifest());
    expect(metric(rejected, 'UploadsRejected')).toEqual([{ value: 1, dimensions: { channel: 'presigned', reason: 'invalid-archive' } }]);
    expect(metric(rejected, 'UploadsAccepted')).toEqual([]);
    // The event handler logs with the Lambda context too.
    expect(logLines(rejected)).toContainEqual(expect.objectContaining({ message: 'Processed uploaded archive', outcome: 'REJECTED', function_name: 'test' }));
  });

  it('count the results of a deployment request by action and cause, one document per combination; a dry run counts nothing', async () => {
    const entry = (device: string, action: 'DEPLOY' | 'UNDEPLOY') => ({
      target: { type: 'DEVICE', id: device, subId: null }, what: { type: 'SCENARIO', id: 'acme-welcome', subId: '1.1.0' }, action,
    });
    const body = JSON.stringify({ requests: [entry('acme-kiosk-0001', 'DEPLOY'), entry('acme-kiosk-9998', 'DEPLOY'), entry('acme-kiosk-9999', 'DEPLOY'), entry('acme-kiosk-0002', 'UNDEPLOY')] });
    const send = async (query = '') => {
      const headers = { authorization: `Bearer ${await token({ scope: 'deployments:write' })}`, 'content-type': 'application/json' };
      return printed(async () => {
        const response = await deploy(event('POST', '/companies/{companyId}/resources/deployments', '/companies/acme/resources/deployments', { body: Buffer.from(body), headers, query }), context());
        expect(response.statusCode).toBe(200);
      });
    };
    expect(metric(await send('dryRun=true'), 'DeploymentResults')).toEqual([]);
    const counts = metric(await send(), 'DeploymentResults');
    expect(counts).toHaveLength(3);
    expect(counts).toEqual(expect.arrayContaining([
      { value: 1, dimensions: { action: 'DEPLOY', cause: 'SUCCESS' } },
      { value: 2, dimensions: { action: 'DEPLOY', cause: 'TARGET_NOT_FOUND' } },
      { value: 1, dimensions: { action: 'UNDEPLOY', cause: 'ALREADY_UNDEPLOYED' } },
    ]));
  });

  it.each([
    ['missing', {}],
    ['malformed', { authorization: 'Basic YWxpY2U6cGFzc3dvcmQ=' }],
    ['invalid', { authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJhbGljZSJ9.' }],
  ] as const)('count a 401 as a token failure, reason %s', async (reason, headers) => {
    const lines = await printed(async () => {
      const response = await search(event('GET', '/resources/search', '/resources/search', { headers }), context());
      expect(response.statusCode).toBe(401);
    });
    expect(metric(lines, 'TokenFailures')).toEqual([{ value: 1, dimensions: { reason } }]);
    expect(metric(lines, 'SearchLatency')).toEqual([]);
  });

  it('count an expired token as a token failure, reason expired', async () => {
    const expired = await token({ scope: 'search:read', expiresAt: Math.floor(Date.now() / 1000) - 60 });
    const lines = await printed(() => search(event('GET', '/resources/search', '/resources/search', { headers: { authorization: `Bearer ${expired}` } }), context()));
    expect(metric(lines, 'TokenFailures')).toEqual([{ value: 1, dimensions: { reason: 'expired' } }]);
  });

  it('measure the latency of a search in milliseconds, with no company or caller dimension', async () => {
    const headers = { authorization: `Bearer ${await token({ scope: 'search:read' })}` };
    const lines = await printed(async () => expect((await search(event('GET', '/resources/search', '/resources/search', { headers }), context())).statusCode).toBe(200));
    const [latency] = emf(lines).filter((document) => 'SearchLatency' in document);
    expect(latency?._aws.CloudWatchMetrics[0]?.Metrics).toEqual([{ Name: 'SearchLatency', Unit: 'Milliseconds' }]);
    expect(latency?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service']]);
    expect(latency?.SearchLatency).toBeGreaterThanOrEqual(0);
    const completed = logLines(lines).find((line) => line.message === 'request completed');
    expect(completed).toMatchObject({ route: 'Search', status: 200, caller: 'alice' });
  });

  it('print nothing about metrics for a request that records none', async () => {
    const handler = routeHandler(scenarioList, async () => jsonResponse(200, {})) as unknown as Handler;
    const headers = { authorization: `Bearer ${await token({ scope: 'scenarios:read' })}` };
    const lines = await printed(() => handler(event('GET', '/companies/{companyId}/resources/scenarios', '/companies/acme/resources/scenarios', { headers }), context()));
    expect(emf(lines)).toEqual([]);
    expect(lines.join('\n')).not.toMatch(/metrics/i);
  });
});
