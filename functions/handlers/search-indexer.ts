import { isDeepStrictEqual } from 'node:util';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { type DocumentKey, documentKeyString, type SearchDocument } from '../core/search/documents.js';
import { type SearchIndex, SearchIndexWriteError } from '../core/search/ports.js';
import { searchIndex } from '../platform/composition/search.js';
import { documentKeyFromImage, type StreamImage, searchDocumentFromImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/** One index write derived from a stream record: an upsert (INSERT, MODIFY) or a removal (REMOVE). */
type Change = { position: number; upsert: SearchDocument } | { position: number; remove: DocumentKey };

/**
 * The index write of a record, or undefined for items that are not searchable (scenario versions…) and for a MODIFY
 * that leaves the item's document as it was (a device's credential or desired state tag written: what is stored
 * beside the resource). An item of a searchable kind that has no document (a device marked `deleting`) is removed, as
 * its REMOVE will be.
 */
function changeOf(record: DynamoDBRecord, position: number): Change | undefined {
  if (record.eventName === 'REMOVE') {
    const key = documentKeyFromImage((record.dynamodb?.OldImage ?? record.dynamodb?.Keys) as StreamImage);
    return key === undefined ? undefined : { position, remove: key };
  }
  const image = record.dynamodb?.NewImage as StreamImage;
  const document = searchDocumentFromImage(image);
  if (document !== undefined && record.eventName === 'MODIFY' && record.dynamodb?.OldImage !== undefined) {
    // Records are applied in order, so the index already holds the old image's document.
    const before = searchDocumentFromImage(record.dynamodb.OldImage as StreamImage);
    // Compared whatever the order of their members: the two images need not list attributes in the same order.
    if (before !== undefined && isDeepStrictEqual(before, document)) return undefined;
  }
  if (document !== undefined) return { position, upsert: document };
  const key = documentKeyFromImage(image);
  return key === undefined ? undefined : { position, remove: key };
}

/**
 * Applies the changes in record order, one index call per run of consecutive upserts or removals (one `_bulk`
 * request on OpenSearch). Returns the position of the first record that was not applied, or undefined when all were.
 */
async function apply(index: SearchIndex, changes: readonly Change[]): Promise<{ failedAt: number; error: unknown } | undefined> {
  let start = 0;
  while (start < changes.length) {
    const first = changes[start] as Change;
    const isUpsert = 'upsert' in first;
    let end = start;
    while (end < changes.length && 'upsert' in (changes[end] as Change) === isUpsert) end += 1;
    const run = changes.slice(start, end);
    try {
      if (isUpsert) await index.upsert(run.map((change) => (change as { upsert: SearchDocument }).upsert));
      else await index.remove(run.map((change) => (change as { remove: DocumentKey }).remove));
    } catch (error) {
      // A partial bulk failure: retry from the first record whose document failed (those before it are written).
      const failed = error instanceof SearchIndexWriteError ? new Set(error.failedIds) : undefined;
      const firstFailed =
        failed === undefined
          ? first
          : (run.find((change) => failed.has(documentKeyString('upsert' in change ? change.upsert : change.remove))) ?? first);
      return { failedAt: firstFailed.position, error };
    }
    start = end;
  }
  return undefined;
}

/**
 * DynamoDB Streams consumer (devices and scenarios tables): INSERT/MODIFY upsert the item's search document,
 * REMOVE deletes it, in record order, one bulk request per run of same-kind records. When the index refuses or
 * cannot be reached (OpenSearch down: ServiceUnavailableError; some documents refused: SearchIndexWriteError), the
 * handler reports the first record not applied and every later one as `batchItemFailures`, so the event source
 * (Lambda with ReportBatchItemFailures, or the local runtime) retries from there and the index catches up once the
 * backend is back.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const records = event.Records;
  const changes = records.flatMap((record, position) => changeOf(record, position) ?? []);
  if (changes.length === 0) return { batchItemFailures: [] };
  const failure = await apply(searchIndex(), changes);
  if (failure === undefined) return { batchItemFailures: [] };
  const failed = records.slice(failure.failedAt);
  logger.error('Indexing failed; the batch will be retried from this record', {
    error: failure.error as Error,
    eventID: failed[0]?.eventID,
    retried: failed.length,
  });
  return { batchItemFailures: failed.map((record) => ({ itemIdentifier: record.dynamodb?.SequenceNumber ?? record.eventID ?? '' })) };
});
