/**
 * The OpenSearch transport over the official client, against a local HTTP fake of OpenSearch: what goes on the
 * wire (method, path, query, JSON and NDJSON bodies), how answers and failures come back, and SigV4 signing
 * (verified here independently, as Amazon OpenSearch Service would, from the secret key).
 */
import { createHash, createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { OpenSearchSearchIndex } from '../../../functions/adapters/aws/opensearch-search-index.js';
import { createOpenSearchTransport, type OpenSearchTransport } from '../../../functions/adapters/aws/opensearch-transport.js';
import type { ScenarioDocument } from '../../../functions/core/search/documents.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import { freePort } from '../../../functions/local/free-port.js';
import { FakeOpenSearch, type FakeRequestRecord } from './fake-opensearch.js';

const scenario = (id: string): ScenarioDocument => ({
  type: 'SCENARIO',
  id,
  company: 'acme',
  name: `Scenario ${id}`,
  latestVersion: '1.0.0',
  versions: ['1.0.0'],
  created: '2024-01-01T00:00:00.000Z',
  updated: '2024-01-01T00:00:00.000Z',
});

let fake: FakeOpenSearch;
let url: string;

beforeAll(async () => {
  fake = new FakeOpenSearch();
  url = await fake.listen();
});

afterAll(async () => {
  await fake.close();
});

afterEach(() => {
  fake.requests.length = 0;
  fake.indexes.clear();
  fake.rejectItem = () => undefined;
});

function lastRequest(): FakeRequestRecord {
  return fake.requests.at(-1) as FakeRequestRecord;
}

describe('OpenSearchClientTransport (unsigned)', () => {
  let transport: OpenSearchTransport;
  beforeAll(() => {
    transport = createOpenSearchTransport({ url, auth: 'none' });
  });

  it('sends JSON bodies as JSON and returns the parsed answer', async () => {
    const response = await transport.request({ method: 'PUT', path: '/resources-1', body: { aliases: { resources: {} } } });
    expect(response).toEqual({ statusCode: 200, body: { acknowledged: true, index: 'resources-1' } });
    expect(lastRequest()).toMatchObject({ method: 'PUT', path: '/resources-1', body: { aliases: { resources: {} } } });
    expect(lastRequest().headers['content-type']).toMatch(/^application\/json/);
    expect(lastRequest().headers.authorization).toBeUndefined();
  });

  it('sends string bodies as NDJSON and keeps the query string', async () => {
    fake.seedIndex('resources-1', 'resources');
    const index = new OpenSearchSearchIndex({ transport, alias: 'resources', refresh: 'wait_for' });
    await index.upsert([scenario('a')]);
    expect(lastRequest().path).toBe('/resources/_bulk?require_alias=true&refresh=wait_for');
    expect(lastRequest().headers['content-type']).toMatch(/^application\/x-ndjson/);
    expect(fake.documentsOf('resources').get('SCENARIO#acme#a')).toMatchObject({ name: 'Scenario a', _key: 'SCENARIO#acme#a' });
  });

  it("returns 4xx answers instead of throwing, with OpenSearch's error", async () => {
    const response = await transport.request({ method: 'POST', path: '/missing/_search', body: {} });
    expect(response.statusCode).toBe(404);
    expect(response.body).toMatchObject({ error: { type: 'index_not_found_exception' } });
  });

  it('rejects when nothing listens, and the adapter answers 503 with Retry-After', async () => {
    const closed = createOpenSearchTransport({ url: `http://127.0.0.1:${await freePort()}`, auth: 'none' });
    await expect(closed.request({ method: 'GET', path: '/_alias/resources' })).rejects.toThrow();
    const error = await new OpenSearchSearchIndex({ transport: closed, alias: 'resources', retryAfterSeconds: 9 })
      .search({ companies: ['acme'], filters: new Map(), sort: { field: 'serial', direction: 'ASC' }, page: 1, pageSize: 20 })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as ServiceUnavailableError).retryAfterSeconds).toBe(9);
  });
});

/** Recomputes the SigV4 signature of a received request from the secret key; true when it matches. */
function verifySigV4(request: FakeRequestRecord, secretAccessKey: string, body: string): boolean {
  const authorization = String(request.headers.authorization);
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(
      authorization,
    );
  if (match === null) return false;
  const [, , date, region, service, signedHeaders, signature] = match as unknown as string[];
  const url = new URL(request.path, 'http://host');
  const query = [...url.searchParams]
    .map(([key, value]) => [encodeURIComponent(key), encodeURIComponent(value)])
    .sort(([a], [b]) => ((a as string) < (b as string) ? -1 : 1))
    .map(([key, value]) => `${key}=${value}`)
    .join('&');
  const names = (signedHeaders as string).split(';');
  const canonicalHeaders = names.map((name) => `${name}:${String(request.headers[name]).trim().replace(/\s+/g, ' ')}\n`).join('');
  const payloadHash = createHash('sha256').update(body).digest('hex');
  if (request.headers['x-amz-content-sha256'] !== payloadHash) return false;
  const canonical = [request.method, url.pathname, query, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const amzDate = String(request.headers['x-amz-date']);
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date as string), region as string), service as string), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex') === signature;
}

describe('OpenSearchClientTransport (OPENSEARCH_AUTH=aws-sigv4)', () => {
  const saved = { ...process.env };
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';

  beforeAll(() => {
    // The default provider chain reads the environment first, as it does in Lambda.
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: secret,
      AWS_SESSION_TOKEN: 'session-token-example',
    });
  });

  afterAll(() => {
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
      if (saved[name] === undefined) delete process.env[name];
      else process.env[name] = saved[name];
    }
  });

  it('signs every request for service es in the region with the default credentials', async () => {
    const transport = createOpenSearchTransport({ url, auth: 'aws-sigv4', region: 'eu-west-3' });
    fake.seedIndex('resources-1', 'resources');
    await new OpenSearchSearchIndex({ transport, alias: 'resources' }).upsert([scenario('signed')]);
    const bulk = lastRequest();
    expect(bulk.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-3\/es\/aws4_request, /);
    expect(bulk.headers['x-amz-security-token']).toBe('session-token-example');
    expect(verifySigV4(bulk, secret, bulk.body as string)).toBe(true);
    expect(verifySigV4(bulk, 'another-secret', bulk.body as string)).toBe(false);

    await transport.request({ method: 'PUT', path: '/_index_template/resources-template', body: { index_patterns: ['resources-*'] } });
    expect(verifySigV4(lastRequest(), secret, JSON.stringify({ index_patterns: ['resources-*'] }))).toBe(true);
  });

  it('refuses to sign without a region', () => {
    expect(() => createOpenSearchTransport({ url, auth: 'aws-sigv4' })).toThrow(/AWS_REGION/);
  });
});
