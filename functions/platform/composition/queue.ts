/** The rollout work queue of the composition root: SQS on AWS, the local runtime's in-process queue for `local:…`. */
import { SQSClient } from '@aws-sdk/client-sqs';
import { SqsWorkQueue } from '../../adapters/aws/sqs-work-queue.js';
import { LocalWorkQueue } from '../../adapters/embedded/local-work-queue.js';
import type { WorkQueue } from '../../core/rollouts/ports.js';
import { rolloutConfig } from '../config.js';
import { traced } from '../observability.js';

let queue: WorkQueue | undefined;

/**
 * The rollout work queue (ROLLOUT_QUEUE_URL), built once on first use, so that functions without the `rollouts`
 * variables never read them.
 * @throws EnvironmentError naming ROLLOUT_QUEUE_URL when it is missing or malformed.
 */
export function workQueue(): WorkQueue {
  if (queue === undefined) {
    const { queueUrl } = rolloutConfig();
    queue = queueUrl.startsWith('local:') ? new LocalWorkQueue(queueUrl) : new SqsWorkQueue(traced(new SQSClient({})), queueUrl);
  }
  return queue;
}
