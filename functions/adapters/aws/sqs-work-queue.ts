import {
  type BatchResultErrorEntry,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import pLimit from 'p-limit';
import type { RolloutWorkMessage } from '../../core/rollouts/model.js';
import type { WorkQueue } from '../../core/rollouts/ports.js';
import { type RetryPolicy, retry } from '../retry.js';

/** Entries of one SendMessageBatch call: SQS's maximum. */
export const SQS_BATCH_SIZE = 10;

/** SendMessageBatch calls in flight at once. */
const SEND_CONCURRENCY = 4;

/** Entries SQS refused for a reason of its own (throttling, an internal error): sent again. */
class FailedEntriesError extends Error {}

/** A batch given up: how many of its messages were not sent, and why (`cause`). */
class UnsentMessagesError extends Error {
  constructor(
    readonly unsent: number,
    cause: unknown,
  ) {
    super(`${unsent} messages not sent`, { cause });
  }
}

/**
 * Back-off for refused entries: 6 calls in all, waits of about 100 ms doubling to 3.2 s (jittered), about 6 s at most.
 * Entries refused as the sender's fault (a malformed message) are not retried: they would be refused again.
 */
const FAILED_ENTRY_RETRY: RetryPolicy = {
  attempts: 6,
  minDelayMs: 100,
  maxDelayMs: 3_200,
  retryable: (error) => error instanceof FailedEntriesError,
};

/**
 * WorkQueue on an SQS queue: messages go out with SendMessageBatch, SQS_BATCH_SIZE per call, a few calls at once;
 * the entries a call reports failed (`Failed`, not the sender's fault) are sent again with back-off.
 */
export class SqsWorkQueue implements WorkQueue {
  constructor(
    private readonly client: SQSClient,
    private readonly queueUrl: string,
  ) {}

  /**
   * @inheritdoc
   * Every batch is attempted even when another one fails.
   * @throws Error naming how many messages were not sent and the first reason SQS gave.
   */
  async send(messages: readonly RolloutWorkMessage[]): Promise<void> {
    const limit = pLimit(SEND_CONCURRENCY);
    const batches: RolloutWorkMessage[][] = [];
    for (let start = 0; start < messages.length; start += SQS_BATCH_SIZE) batches.push(messages.slice(start, start + SQS_BATCH_SIZE));
    const outcomes = await Promise.allSettled(batches.map((batch) => limit(() => this.sendBatch(batch))));
    const unsent = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as UnsentMessagesError] : []));
    const [first] = unsent;
    if (first !== undefined) {
      const count = unsent.reduce((sum, failure) => sum + failure.unsent, 0);
      const reason = first.cause as Error | undefined;
      throw new Error(
        `SendMessageBatch: ${count} of ${messages.length} rollout work messages not sent (${String(reason?.message ?? reason)}).`,
        { cause: reason },
      );
    }
  }

  /** Sends one batch, retrying its failed entries. @throws UnsentMessagesError with how many stayed unsent. */
  private async sendBatch(batch: readonly RolloutWorkMessage[]): Promise<void> {
    let pending: SendMessageBatchRequestEntry[] = batch.map((message, index) => ({
      Id: String(index),
      MessageBody: JSON.stringify(message),
    }));
    try {
      await retry(async () => {
        const response = await this.client.send(new SendMessageBatchCommand({ QueueUrl: this.queueUrl, Entries: pending }));
        const failed: BatchResultErrorEntry[] = response.Failed ?? [];
        const failedIds = new Set(failed.map((entry) => entry.Id));
        pending = pending.filter((entry) => failedIds.has(entry.Id));
        if (failed.length === 0) return;
        const senderFault = failed.find((entry) => entry.SenderFault === true);
        if (senderFault !== undefined) {
          throw new Error(`SQS refused ${failed.length} messages, e.g. ${senderFault.Code}: ${senderFault.Message ?? 'no message'}.`);
        }
        throw new FailedEntriesError(
          `SQS failed ${failed.length} messages, e.g. ${failed[0]?.Code}: ${failed[0]?.Message ?? 'no message'}.`,
        );
      }, FAILED_ENTRY_RETRY);
    } catch (error) {
      throw new UnsentMessagesError(pending.length, error);
    }
  }
}
