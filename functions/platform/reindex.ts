import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { searchDocumentFromItem } from '../adapters/aws/search-documents.js';
import type { SearchDocument } from '../core/search/documents.js';
import type { Services } from './composition.js';

/**
 * Rebuilds the search index from DynamoDB, the source of truth: scans the devices and scenarios tables (paginated,
 * 1 MB pages) and upserts every searchable item. Returns the number of documents indexed.
 */
export async function rebuildSearchIndex(services: Pick<Services, 'dynamoDb' | 'tables' | 'search'>): Promise<number> {
  let indexed = 0;
  for (const table of [services.tables.devices, services.tables.scenarios]) {
    let startKey: Record<string, unknown> | undefined;
    do {
      const page = await services.dynamoDb.send(new ScanCommand({ TableName: table, ExclusiveStartKey: startKey, ConsistentRead: true }));
      const documents = (page.Items ?? []).map(searchDocumentFromItem).filter((document): document is SearchDocument => document !== undefined);
      if (documents.length > 0) await services.search.upsert(documents);
      indexed += documents.length;
      startKey = page.LastEvaluatedKey;
    } while (startKey !== undefined);
  }
  return indexed;
}
