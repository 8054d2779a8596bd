/**
 * Every adapter but the search index in one object, for the callers that want them all: the local runtime, its
 * seeding and the handlers whose use cases take most of them. A function that needs only tables imports storage.ts
 * (and so never loads the S3 or SQS SDK).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { WorkQueue } from '../../core/rollouts/ports.js';
import type { ArchiveStore } from '../../core/scenarios/ports.js';
import type { problemOf } from '../problem.js';
import { uploadStorage } from './archives.js';
import { workQueue } from './queue.js';
import type { StorageServices } from './storage.js';

/** Every adapter a handler may need, but the search index (search.ts: `searchIndex()`). */
export interface Services extends StorageServices {
  s3: S3Client;
  archives: ArchiveStore;
  /**
   * The rollout work queue (ROLLOUT_QUEUE_URL: SQS, or the local runtime's in-process queue for `local:…`), built on
   * first use, so that functions without the `rollouts` variables never read them.
   * @throws EnvironmentError naming ROLLOUT_QUEUE_URL when it is missing or malformed.
   */
  readonly queue: WorkQueue;
  /** The problem body a rejected upload slot keeps (platform/problem.ts), for the upload use cases to store. */
  problemOf: typeof problemOf;
}

let built: Services | undefined;

/** Builds (once) and returns the adapters. @throws EnvironmentError naming every missing or malformed storage variable. */
export function services(): Services {
  if (built === undefined) {
    const parts: Omit<Services, 'queue'> = uploadStorage();
    // Not enumerable: a caller spreading services() (`{ ...services(), … }`) must not build the queue, which reads
    // the `rollouts` variables only the functions sending rollout work are given.
    built = Object.defineProperty(parts, 'queue', { get: workQueue, enumerable: false }) as Services;
  }
  return built;
}
