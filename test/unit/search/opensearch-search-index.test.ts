import { describe, expect, it } from 'vitest';
import {
  BulkIndexError,
  type OpenSearchRequest,
  type OpenSearchResponse,
  OpenSearchSearchIndex,
  type OpenSearchTransport,
} from '../../../functions/adapters/aws/opensearch-search-index.js';
import type { ScenarioDocument } from '../../../functions/core/search/documents.js';
import type { SearchQuery } from '../../../functions/core/search/query.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';

/** Records requests and answers with the queued responses (or throws the queued error). */
class FakeTransport implements OpenSearchTransport {
  readonly requests: OpenSearchRequest[] = [];
  constructor(private readonly answers: (OpenSearchResponse | Error)[]) {}
  async request(request: OpenSearchRequest): Promise<OpenSearchResponse> {
    this.requests.push(request);
    const answer = this.answers.shift() ?? { statusCode: 200, body: {} };
    if (answer instanceof Error) throw answer;
    return answer;
  }
}

const query: SearchQuery = { companies: ['acme'], filters: new Map(), sort: { field: 'serial', direction: 'ASC' }, page: 1, pageSize: 20 };
const scenario = (id: string): ScenarioDocument => ({
  type: 'SCENARIO',
  id,
  company: 'acme',
  name: id,
  latestVersion: '1.0.0',
  versions: ['1.0.0'],
  created: '2024-01-01T00:00:00.000Z',
  updated: '2024-01-01T00:00:00.000Z',
});

describe('OpenSearchSearchIndex', () => {
  it('searches the alias and maps the response', async () => {
    const transport = new FakeTransport([
      { statusCode: 200, body: { hits: { total: { value: 1 }, hits: [{ _source: { ...scenario('a'), _key: 'x' } }] } } },
    ]);
    const index = new OpenSearchSearchIndex({ transport, alias: 'resources' });
    expect(await index.search(query)).toEqual({ total: 1, resources: [scenario('a')] });
    expect(transport.requests[0]).toMatchObject({ method: 'POST', path: '/resources/_search' });
  });

  it('maps connection failures and 5xx/429 to ServiceUnavailableError with Retry-After', async () => {
    const unreachable = new OpenSearchSearchIndex({
      transport: new FakeTransport([new Error('ECONNREFUSED')]),
      alias: 'r',
      retryAfterSeconds: 7,
    });
    const refused = await unreachable.search(query).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    expect((refused as ServiceUnavailableError).retryAfterSeconds).toBe(7);

    const busy = new OpenSearchSearchIndex({
      transport: new FakeTransport([{ statusCode: 429, body: {}, retryAfterSeconds: 30 }]),
      alias: 'r',
    });
    const throttled = await busy
      .countValues({ companies: ['acme'], filters: new Map(), fields: ['type'] })
      .catch((error: unknown) => error);
    expect(throttled).toBeInstanceOf(ServiceUnavailableError);
    expect((throttled as ServiceUnavailableError).retryAfterSeconds).toBe(30);

    const down = new OpenSearchSearchIndex({ transport: new FakeTransport([{ statusCode: 503, body: { error: 'red' } }]), alias: 'r' });
    await expect(down.upsert([scenario('a')])).rejects.toBeInstanceOf(ServiceUnavailableError);
  });

  it('reports other statuses as errors with the reason', async () => {
    const index = new OpenSearchSearchIndex({
      transport: new FakeTransport([
        { statusCode: 404, body: { error: { type: 'index_not_found_exception', reason: 'no such index [r]' } } },
      ]),
      alias: 'r',
    });
    await expect(index.search(query)).rejects.toThrow(/404: index_not_found_exception: no such index/);
  });

  it('writes through _bulk to the alias only (require_alias), with the refresh option, and skips empty writes', async () => {
    const transport = new FakeTransport([
      { statusCode: 200, body: { errors: false, items: [] } },
      { statusCode: 200, body: { errors: false, items: [] } },
    ]);
    const index = new OpenSearchSearchIndex({ transport, alias: 'resources', refresh: 'wait_for' });
    await index.upsert([]);
    await index.remove([]);
    expect(transport.requests).toHaveLength(0);
    await index.upsert([scenario('a')]);
    expect(transport.requests[0]).toMatchObject({ method: 'POST', path: '/resources/_bulk?require_alias=true&refresh=wait_for' });
    expect(typeof transport.requests[0]?.body).toBe('string');
    // The reindex writes to a concrete index: no require_alias there.
    await new OpenSearchSearchIndex({ transport, alias: 'resources-20260101t000000000z', requireAlias: false }).upsert([scenario('a')]);
    expect(transport.requests[1]).toMatchObject({ path: '/resources-20260101t000000000z/_bulk' });
  });

  it('reports writes and deletes refused because the alias is missing (nothing silently dropped)', async () => {
    const missing = { type: 'index_not_found_exception', reason: 'no such index [resources] and [require_alias] request flag is [true]' };
    const transport = new FakeTransport([
      {
        statusCode: 200,
        body: {
          errors: true,
          items: [
            { index: { _id: 'SCENARIO#acme#a', status: 404, error: missing } },
            { delete: { _id: 'DEVICE#acme#d', status: 404, error: missing } },
          ],
        },
      },
    ]);
    const error = await new OpenSearchSearchIndex({ transport, alias: 'resources' })
      .bulk([scenario('a')], [{ type: 'DEVICE', company: 'acme', id: 'd' }])
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BulkIndexError);
    expect((error as BulkIndexError).failedIds).toEqual(['SCENARIO#acme#a', 'DEVICE#acme#d']);
  });

  it('throws BulkIndexError listing the failed ids; deleting an unknown document is not a failure', async () => {
    const transport = new FakeTransport([
      {
        statusCode: 200,
        body: {
          errors: true,
          items: [
            { index: { _id: 'SCENARIO#acme#a', status: 201 } },
            { index: { _id: 'SCENARIO#acme#b', status: 400, error: { type: 'mapper_parsing_exception', reason: 'bad date' } } },
            { delete: { _id: 'DEVICE#acme#gone', status: 404, result: 'not_found' } },
            { delete: { _id: 'DEVICE#acme#busy', status: 429, error: { type: 'es_rejected_execution_exception' } } },
          ],
        },
      },
    ]);
    const index = new OpenSearchSearchIndex({ transport, alias: 'resources' });
    const error = await index
      .bulk(
        [scenario('a'), scenario('b')],
        [
          { type: 'DEVICE', company: 'acme', id: 'gone' },
          { type: 'DEVICE', company: 'acme', id: 'busy' },
        ],
      )
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BulkIndexError);
    expect((error as BulkIndexError).failedIds).toEqual(['SCENARIO#acme#b', 'DEVICE#acme#busy']);
    expect((error as BulkIndexError).message).toContain('mapper_parsing_exception: bad date');
  });

  it('selects ids page by page with search_after until max or the last match', async () => {
    const page = (ids: string[], total: number): OpenSearchResponse => ({
      statusCode: 200,
      body: { hits: { total: { value: total }, hits: ids.map((id) => ({ _id: `DEVICE#acme#${id}`, sort: [id, `DEVICE#acme#${id}`] })) } },
    });
    const first = Array.from({ length: 10_000 }, (_, n) => `a-${String(n).padStart(5, '0')}`);
    const transport = new FakeTransport([page(first, 10_002), page(['b-1', 'b-2'], 10_002)]);
    const index = new OpenSearchSearchIndex({ transport, alias: 'resources' });
    const selection = { companies: ['acme'], filters: new Map([['health.mode', ['SERVER']]]) };
    expect(await index.selectIds(selection, 100_000)).toEqual({ ids: [...first, 'b-1', 'b-2'], total: 10_002 });
    expect(transport.requests.map((request) => request.path)).toEqual(['/resources/_search', '/resources/_search']);
    const bodies = transport.requests.map((request) => request.body as Record<string, unknown>);
    expect(bodies[0]).toMatchObject({ size: 10_000, _source: false, track_total_hits: true });
    expect(bodies[0]).not.toHaveProperty('search_after');
    expect(bodies[1]).toMatchObject({ size: 10_000, search_after: ['a-09999', 'DEVICE#acme#a-09999'] });

    // Stops at max: the second request asks only for what is missing, and no third is sent.
    const bounded = new FakeTransport([page(first, 30_000), page(['b-1', 'b-2', 'b-3'], 30_000)]);
    const limited = await new OpenSearchSearchIndex({ transport: bounded, alias: 'resources' }).selectIds(selection, 10_003);
    expect(limited).toEqual({ ids: [...first, 'b-1', 'b-2', 'b-3'], total: 30_000 });
    expect(bounded.requests.map((request) => (request.body as { size: number }).size)).toEqual([10_000, 3]);

    // max 0: one request for the total alone.
    const counting = new FakeTransport([page([], 7)]);
    expect(await new OpenSearchSearchIndex({ transport: counting, alias: 'resources' }).selectIds(selection, 0)).toEqual({
      ids: [],
      total: 7,
    });
    expect((counting.requests[0]?.body as { size: number }).size).toBe(0);
  });

  it('creates the index with the template behind the alias', async () => {
    const transport = new FakeTransport([{ statusCode: 200, body: { acknowledged: true } }]);
    await new OpenSearchSearchIndex({ transport, alias: 'resources', index: 'resources-v2' }).createIndex();
    const [request] = transport.requests;
    expect(request).toMatchObject({
      method: 'PUT',
      path: '/resources-v2',
      body: { aliases: { resources: {} }, mappings: { dynamic: false } },
    });
  });
});
