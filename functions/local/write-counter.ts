/**
 * Counts what the local runtime writes, so that benchmarks can state the cost of an operation in the units AWS bills:
 * DynamoDB write requests per table (each item of a batch or a transaction counted) and search index document
 * updates. Served by the admin listener (`GET /stats/writes`); counting is a few additions per call.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { SearchIndex } from '../core/search/ports.js';

/** Writes so far: DynamoDB item writes by table name, and search documents upserted or removed. */
export interface WriteCounts {
  dynamoDb: Record<string, number>;
  searchDocuments: number;
}

type WriteInput = {
  TableName?: string;
  RequestItems?: Record<string, unknown[]>;
  TransactItems?: Record<string, { TableName?: string } | undefined>[];
};

/** Counts the writes of one DynamoDB client and one search index from now on. */
export class WriteCounter {
  private readonly dynamoDb = new Map<string, number>();
  private searchDocuments = 0;

  /** A snapshot of the counts. */
  counts(): WriteCounts {
    return { dynamoDb: Object.fromEntries(this.dynamoDb), searchDocuments: this.searchDocuments };
  }

  /** Counts every PutItem, UpdateItem, DeleteItem, BatchWriteItem item and TransactWriteItems write sent by `client`. */
  watchDynamoDb(client: DynamoDBDocumentClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        this.countCommand(context.commandName ?? '', args.input as WriteInput);
        return next(args);
      },
      { step: 'initialize', name: 'localWriteCounter', override: true },
    );
  }

  /** Counts the documents `index` upserts and removes (wraps its two write methods). */
  watchSearchIndex(index: SearchIndex): void {
    const upsert = index.upsert.bind(index);
    const remove = index.remove.bind(index);
    index.upsert = async (documents) => {
      this.searchDocuments += documents.length;
      return upsert(documents);
    };
    index.remove = async (keys) => {
      this.searchDocuments += keys.length;
      return remove(keys);
    };
  }

  private add(table: string | undefined, count = 1): void {
    if (table === undefined || count === 0) return;
    this.dynamoDb.set(table, (this.dynamoDb.get(table) ?? 0) + count);
  }

  private countCommand(command: string, input: WriteInput): void {
    if (/^(Put|Update|Delete)(Item)?Command$/.test(command)) this.add(input.TableName);
    else if (/^BatchWrite(Item)?Command$/.test(command)) {
      for (const [table, requests] of Object.entries(input.RequestItems ?? {})) this.add(table, requests.length);
    } else if (/^TransactWrite(Items)?Command$/.test(command)) {
      for (const item of input.TransactItems ?? []) {
        // A ConditionCheck writes nothing.
        for (const [kind, operation] of Object.entries(item)) if (kind !== 'ConditionCheck') this.add(operation?.TableName);
      }
    }
  }
}
