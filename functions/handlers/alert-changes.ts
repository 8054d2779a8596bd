import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { MAX_BACKFILL_DEVICES, type RuleBackfillResult } from '../core/alerts/backfill.js';
import { applyAlertTableChanges } from '../core/alerts/changes.js';
import type { StoredAlertRule } from '../core/alerts/model.js';
import { alertStorage, alertTableChangeOf } from '../platform/composition/alerts.js';
import { eventPublisher } from '../platform/composition/events.js';
import { searchIndex } from '../platform/composition/search.js';
import { storage } from '../platform/composition/storage.js';
import type { StreamImage } from '../platform/composition/stream-images.js';
import { logger } from '../platform/logger.js';
import { eventHandler } from '../platform/observability.js';

/** Logs a rule's first evaluation: a warning when it could not see every device already holding its condition. */
function logBackfill(rule: StoredAlertRule, result: RuleBackfillResult): void {
  const fields = { company: rule.company, ruleId: rule.id, revision: rule.revision, ...result };
  if (result.searchUnavailable)
    logger.warn('The search could not be reached: the new alert rule sees devices from their next change only', fields);
  else if (result.truncated)
    logger.warn('An alert rule matches more devices than its creation evaluates; the others alert from their next change', {
      ...fields,
      max: MAX_BACKFILL_DEVICES,
    });
  else logger.info('Alert rule evaluated on the devices already holding its condition', fields);
}

/**
 * DynamoDB Streams consumer of the alerts table: an AlertChanged event for every alert that became OPEN or RESOLVED,
 * the watches of a rule deleted or changed ended, and a rule created or changed evaluated on the devices the search
 * finds already holding its condition (core/alerts/changes.ts, backfill.ts). Everything is idempotent, so a failure
 * throws and the whole batch is retried.
 */
export const handler = eventHandler<DynamoDBStreamEvent, DynamoDBBatchResponse>().handler(async (event) => {
  const changes = event.Records.flatMap(
    (record) => alertTableChangeOf(record.dynamodb?.OldImage as StreamImage, record.dynamodb?.NewImage as StreamImage) ?? [],
  );
  if (changes.length === 0) return { batchItemFailures: [] };
  try {
    await applyAlertTableChanges(
      {
        events: eventPublisher(),
        alerts: alertStorage().alerts,
        backfill: { search: searchIndex(), devices: storage().deviceDocuments },
        onBackfill: logBackfill,
      },
      changes,
    );
  } catch (error) {
    logger.error('Deriving alert events failed; the batch will be retried', {
      error: error as Error,
      records: event.Records.length,
      changes: changes.length,
      firstEventID: event.Records[0]?.eventID,
    });
    throw error;
  }
  return { batchItemFailures: [] };
});
