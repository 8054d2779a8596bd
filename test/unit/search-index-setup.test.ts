/**
 * The CloudFormation custom resource installing the search index (functions/handlers/search-index-setup.ts, `onEvent`
 * of the CDK Provider framework), through the real composition and client against the OpenSearch fake over HTTP.
 */
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { indexTemplate } from '../../functions/adapters/aws/opensearch-queries.js';
import { FakeOpenSearch } from './fake-opensearch.js';

type Handler = (event: CloudFormationCustomResourceEvent, context: Context) => Promise<{ PhysicalResourceId: string; Data?: Record<string, string> }>;

const fake = new FakeOpenSearch();
let handler: Handler;

beforeAll(async () => {
  const url = await fake.listen();
  Object.assign(process.env, { SEARCH_BACKEND: 'opensearch', OPENSEARCH_URL: url, OPENSEARCH_INDEX: 'devices-search', OPENSEARCH_AUTH: 'none', POWERTOOLS_LOG_LEVEL: 'SILENT' });
  ({ handler } = (await import('../../functions/handlers/search-index-setup.js')) as unknown as { handler: Handler });
});

afterAll(async () => {
  await fake.close();
});

beforeEach(() => {
  fake.down = false;
});

function event(RequestType: 'Create' | 'Update' | 'Delete'): CloudFormationCustomResourceEvent {
  const common = {
    ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider', ResponseURL: 'https://cloudformation-custom-resource-response',
    StackId: 'arn:aws:cloudformation:eu-west-1:123456789012:stack/DeviceScenarioService-dev-Stateless/1', RequestId: 'request-1',
    LogicalResourceId: 'SearchIndexSetup', ResourceType: 'Custom::SearchIndexSetup',
    ResourceProperties: { ServiceToken: 'arn:aws:lambda:eu-west-1:123456789012:function:provider', TemplateVersion: 'v1' },
  };
  if (RequestType === 'Create') return { ...common, RequestType };
  return { ...common, RequestType, PhysicalResourceId: 'devices-search', OldResourceProperties: common.ResourceProperties } as CloudFormationCustomResourceEvent;
}

describe('search index setup (custom resource)', () => {
  it('Create puts the template and creates the first index behind the alias', async () => {
    const result = await handler(event('Create'), {} as Context);
    const [created] = Object.values(fake.aliasTable());
    expect(created).toHaveLength(1);
    expect(result).toEqual({ PhysicalResourceId: 'devices-search', Data: { Indexes: created?.[0] } });
    expect(created?.[0]).toMatch(/^devices-search-\d{8}t\d{9}z$/);
    expect(fake.templates.get('devices-search-template')).toMatchObject({ index_patterns: ['devices-search-*'], template: indexTemplate() });
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

  it('fails (and so does the deployment) when the domain cannot be reached', async () => {
    fake.down = true;
    await expect(handler(event('Create'), {} as Context)).rejects.toThrow(/search backend cannot be reached/);
  });
});
