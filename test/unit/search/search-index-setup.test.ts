/**
 * The CloudFormation custom resource installing the search index (functions/handlers/search-index-setup.ts, `onEvent`
 * of the CDK Provider framework), through the real composition and client against the OpenSearch fake over HTTP.
 */
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { indexTemplate } from '../../../functions/adapters/aws/opensearch-queries.js';
import { FakeOpenSearch } from './fake-opensearch.js';

type Handler = (
  event: CloudFormationCustomResourceEvent,
  context: Context,
) => Promise<{ PhysicalResourceId: string; Data?: Record<string, string> }>;
type Waiting = { sleep?: (ms: number) => Promise<void>; now?: () => number };

const fake = new FakeOpenSearch();
let handler: Handler;
let createHandler: (waiting?: Waiting) => Handler;

/** A handler whose waits only advance a fake clock; returns it and the waits it made, ms. */
function handlerWithFakeClock(): { handler: Handler; waits: number[] } {
  const waits: number[] = [];
  let clock = 0;
  const handler = createHandler({
    now: () => clock,
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
  });
  return { handler, waits };
}

/** Each wait is jittered between half and all of its nominal value (2 s doubling to 60 s). */
function expectBackoff(waits: number[], nominal: number[]): void {
  expect(waits).toHaveLength(nominal.length);
  waits.forEach((ms, index) => {
    expect(ms).toBeGreaterThanOrEqual(nominal[index]! / 2);
    expect(ms).toBeLessThanOrEqual(nominal[index]!);
  });
}

beforeAll(async () => {
  const url = await fake.listen();
  Object.assign(process.env, {
    SEARCH_ENGINE: 'opensearch',
    OPENSEARCH_URL: url,
    OPENSEARCH_INDEX: 'devices-search',
    OPENSEARCH_AUTH: 'none',
    POWERTOOLS_LOG_LEVEL: 'SILENT',
  });
  ({ handler, createHandler } = (await import('../../../functions/handlers/search-index-setup.js')) as unknown as {
    handler: Handler;
    createHandler: typeof createHandler;
  });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.down = false;
  fake.refusals.length = 0;
});

function event(RequestType: 'Create' | 'Update' | 'Delete'): CloudFormationCustomResourceEvent {
  const common = {
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider',
    ResponseURL: 'https://cloudformation-custom-resource-response',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/DeviceScenarioService-dev-Stateless/1',
    RequestId: 'request-1',
    LogicalResourceId: 'SearchIndexSetup',
    ResourceType: 'Custom::SearchIndexSetup',
    ResourceProperties: { ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider', TemplateVersion: 'v1' },
  };
  if (RequestType === 'Create') return { ...common, RequestType };
  return {
    ...common,
    RequestType,
    PhysicalResourceId: 'devices-search',
    OldResourceProperties: common.ResourceProperties,
  } as CloudFormationCustomResourceEvent;
}

describe('search index setup (custom resource)', () => {
  it('Create puts the template and creates the first index behind the alias', async () => {
    const result = await handler(event('Create'), {} as Context);
    const [created] = Object.values(fake.aliasTable());
    expect(created).toHaveLength(1);
    expect(result).toEqual({ PhysicalResourceId: 'devices-search', Data: { Indexes: created?.[0] } });
    expect(created?.[0]).toMatch(/^devices-search-\d{8}t\d{9}z$/);
    expect(fake.templates.get('devices-search-template')).toMatchObject({
      index_patterns: ['devices-search-*'],
      template: indexTemplate(),
    });
    expect(fake.indexes.get(created?.[0] as string)?.fromTemplate).toEqual(indexTemplate());
  });

  it('Update refreshes the template and keeps the index and its documents', async () => {
    const [index] = fake.aliasTable()['devices-search'] ?? [];
    fake.indexes.get(index as string)?.documents.set('DEVICE#acme#k1', { id: 'k1' });
    fake.templates.clear();
    const result = await handler(event('Update'), {} as Context);
    expect(result).toEqual({ PhysicalResourceId: 'devices-search', Data: { Indexes: index } });
    expect(fake.templates.has('devices-search-template')).toBe(true);
    expect(fake.documentsOf('devices-search').size).toBe(1);
  });

  it('Delete retains everything and sends nothing to OpenSearch', async () => {
    const before = fake.requests.length;
    expect(await handler(event('Delete'), {} as Context)).toEqual({ PhysicalResourceId: 'devices-search' });
    expect(fake.requests.length).toBe(before);
    expect(Object.keys(fake.aliasTable())).toEqual(['devices-search']);
  });

  it('waits with jittered exponential backoff while a new domain answers 403 (its access policy not applied yet), then succeeds', async () => {
    const forbidden = {
      statusCode: 403,
      body: { Message: 'User: arn:aws:sts::123456789012:assumed-role/setup is not authorized to perform: es:ESHttpPut' },
    };
    fake.refusals.push(forbidden, forbidden);
    const before = fake.requests.length;
    const { handler: patient, waits } = handlerWithFakeClock();
    const result = await patient(event('Update'), {} as Context);
    expect(result).toEqual({ PhysicalResourceId: 'devices-search', Data: { Indexes: fake.aliasTable()['devices-search']?.join(',') } });
    expectBackoff(waits, [2_000, 4_000]);
    expect(fake.requests.slice(before, before + 3).map((request) => `${request.method} ${request.path}`)).toEqual(
      Array(3).fill('PUT /_index_template/devices-search-template'),
    );
  });

  it('does not retry a refusal that waiting cannot fix (400)', async () => {
    fake.refusals.push({ statusCode: 400, body: { error: { type: 'mapper_parsing_exception', reason: 'bad mapping' } } });
    const { handler: patient, waits } = handlerWithFakeClock();
    await expect(patient(event('Update'), {} as Context)).rejects.toThrow(/400: mapper_parsing_exception/);
    expect(waits).toEqual([]);
  });

  it('fails (and so does the deployment) when the domain still cannot be reached after about 10 minutes', async () => {
    fake.down = true;
    const { handler: patient, waits } = handlerWithFakeClock();
    await expect(patient(event('Create'), {} as Context)).rejects.toThrow(/search backend cannot be reached/);
    expectBackoff(waits.slice(0, 7), [2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
    const total = waits.reduce((sum, ms) => sum + ms, 0);
    expect(total).toBeLessThanOrEqual(10 * 60_000);
    expect(total).toBeGreaterThan(9 * 60_000);
  });
});
