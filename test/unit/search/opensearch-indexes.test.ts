/**
 * Index administration (template, concrete indexes, alias) against the in-memory OpenSearch fake: what the setup
 * custom resource and the reindex rely on.
 */
import { describe, expect, it } from 'vitest';
import {
  concreteIndexName,
  indexTemplateBody,
  OpenSearchIndexes,
  templateName,
  templateVersion,
} from '../../../functions/adapters/aws/opensearch-indexes.js';
import { indexTemplate } from '../../../functions/adapters/aws/opensearch-queries.js';
import { OpenSearchRequestError } from '../../../functions/adapters/aws/opensearch-transport.js';
import { ServiceUnavailableError } from '../../../functions/core/shared/errors.js';
import { FakeOpenSearch } from './fake-opensearch.js';

const NOW = new Date('2026-11-22T16:16:46.712Z');

describe('concrete index names and the template', () => {
  it('names concrete indexes <alias>-<UTC time>, lower case, to the millisecond', () => {
    expect(concreteIndexName('resources', NOW)).toBe('resources-20261122t161646712z');
    expect(concreteIndexName('resources', new Date(NOW.getTime() + 1))).not.toBe(concreteIndexName('resources', NOW));
  });

  it('applies the mappings of indexTemplate() to every <alias>-* index', () => {
    expect(templateName('resources')).toBe('resources-template');
    expect(indexTemplateBody('resources')).toEqual({
      index_patterns: ['resources-*'],
      priority: 100,
      template: indexTemplate(),
      _meta: { alias: 'resources', version: templateVersion() },
    });
    expect(templateVersion()).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('OpenSearchIndexes', () => {
  it('ensure() on an empty domain puts the template and creates the first index with the alias', async () => {
    const fake = new FakeOpenSearch();
    const result = await new OpenSearchIndexes(fake.transport(), 'resources').ensure(NOW);
    expect(result).toEqual({ indexes: ['resources-20261122t161646712z'], created: true });
    expect(fake.aliasTable()).toEqual({ resources: ['resources-20261122t161646712z'] });
    expect(fake.indexes.get('resources-20261122t161646712z')?.fromTemplate).toEqual(indexTemplate());
    expect(fake.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'PUT /_index_template/resources-template',
      'GET /_alias/resources',
      'PUT /resources-20261122t161646712z',
    ]);
  });

  it('ensure() again only refreshes the template and keeps the index and its data', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-old', 'resources', { 'DEVICE#acme#d1': { id: 'd1' } });
    const result = await new OpenSearchIndexes(fake.transport(), 'resources').ensure(NOW);
    expect(result).toEqual({ indexes: ['resources-old'], created: false });
    expect(fake.indexes.size).toBe(1);
    expect(fake.documentsOf('resources').size).toBe(1);
    expect(fake.templates.has('resources-template')).toBe(true);
  });

  it('ensure() with replicas puts them in the template and sets them on the indexes already behind the alias', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-old', 'resources');
    await new OpenSearchIndexes(fake.transport(), 'resources', { replicas: 1 }).ensure(NOW);
    expect(fake.templates.get('resources-template')).toEqual(indexTemplateBody('resources', 1));
    expect(fake.replicaSettings).toEqual(new Map([['resources-old', 1]]));
    expect(templateVersion(1)).not.toBe(templateVersion(0));
    const fresh = new FakeOpenSearch();
    await new OpenSearchIndexes(fresh.transport(), 'resources', { replicas: 1 }).ensure(NOW);
    expect(fresh.indexes.get('resources-20261122t161646712z')?.fromTemplate).toMatchObject({ settings: { number_of_replicas: 1 } });
  });

  it('says why when an index already carries the alias name', async () => {
    const fake = new FakeOpenSearch();
    fake.indexes.set('resources', { documents: new Map(), aliases: new Set(), fromTemplate: undefined, autoCreated: false });
    const error = await new OpenSearchIndexes(fake.transport(), 'resources').ensure(NOW).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenSearchRequestError);
    expect(error).toMatchObject({ statusCode: 400, type: 'invalid_alias_name_exception' });
  });

  it('switches the alias in one atomic _aliases call and deletes indexes, ignoring missing ones', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-a', 'resources');
    fake.seedIndex('resources-b', 'resources');
    const indexes = new OpenSearchIndexes(fake.transport(), 'resources');
    await indexes.createIndex('resources-c');
    await indexes.switchAlias('resources-c', ['resources-a', 'resources-b']);
    expect(fake.requests.at(-1)).toMatchObject({
      method: 'POST',
      path: '/_aliases',
      body: {
        actions: [
          { remove: { index: 'resources-a', alias: 'resources' } },
          { remove: { index: 'resources-b', alias: 'resources' } },
          { add: { index: 'resources-c', alias: 'resources' } },
        ],
      },
    });
    expect(await indexes.aliasIndexes()).toEqual(['resources-c']);
    await indexes.deleteIndexes(['resources-a', 'resources-b', 'resources-gone']);
    expect([...fake.indexes.keys()]).toEqual(['resources-c']);
  });

  it('refuses the whole switch when an old index lost the alias meanwhile (a concurrent reindex)', async () => {
    const fake = new FakeOpenSearch();
    fake.seedIndex('resources-a', 'resources');
    const indexes = new OpenSearchIndexes(fake.transport(), 'resources');
    await indexes.createIndex('resources-b');
    await indexes.createIndex('resources-c');
    await indexes.switchAlias('resources-b', ['resources-a']);
    await expect(indexes.switchAlias('resources-c', ['resources-a'])).rejects.toMatchObject({ type: 'aliases_not_found_exception' });
    expect(fake.aliasTable()).toEqual({ resources: ['resources-b'] });
  });

  it('maps an unreachable domain to ServiceUnavailableError', async () => {
    const fake = new FakeOpenSearch();
    fake.down = true;
    await expect(new OpenSearchIndexes(fake.transport(), 'resources').ensure()).rejects.toBeInstanceOf(ServiceUnavailableError);
  });
});
