import type { ArchiveStore, ScenarioRepository, UploadSlotRepository } from './ports.js';
import { expiredUploadError, interruptedUploadError, PROCESSING_CLAIM_TIMEOUT_MS, type ProblemOf } from './presigned-upload.js';

/** What the upload sweeper needs. */
export interface UploadSweepDependencies {
  uploads: Pick<UploadSlotRepository, 'overdue' | 'reject'>;
  scenarios: Pick<ScenarioRepository, 'overdueStagedArchives' | 'abandonStagedArchive' | 'discardStagedArchive'>;
  archives: Pick<ArchiveStore, 'stat' | 'delete'>;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /** How long processing may take after an archive arrived, ms. @default PROCESSING_CLAIM_TIMEOUT_MS */
  processingTimeoutMs?: number;
  /** Most slots, and most staged archives, looked at per run (the next run goes on). @default 200 */
  batchSize?: number;
  /** The problem body a REJECTED slot keeps for its refusal (UploadSlot.problem). */
  problemOf: ProblemOf;
}

/** What one sweep did: upload ids, and the keys of deleted orphan archives. */
export interface UploadSweepResult {
  /** Slots rejected with reason `expired`. */
  expired: string[];
  /** Slots rejected with reason `interrupted`. */
  interrupted: string[];
  /** Overdue PENDING slots whose archive arrived in time and whose event may still come: left for a later run. */
  waiting: string[];
  /** Final archive keys deleted because no version record will ever reference them. */
  orphansDeleted: string[];
}

/**
 * Finishes the uploads that never finished (run every few minutes: a schedule on AWS, a timer locally). Overdue
 * open slots and staged archives are found by an index query on their deadline, never a scan. Every transition is
 * a conditional write, so a sweep racing a late processor never overwrites a real outcome: whichever writes first
 * wins and the other backs off.
 *
 * - PENDING slot past `expiresAt` with no object: REJECTED, reason `expired` (nothing arrived in time).
 * - PENDING slot whose object arrived after `expiresAt`: REJECTED `expired`, object deleted.
 * - PENDING slot whose object arrived in time but was not processed within `processingTimeoutMs` of its arrival
 *   (the event was lost or kept failing): REJECTED `interrupted`, object deleted; before that, left waiting.
 * - PROCESSING slot whose claim is older than `processingTimeoutMs` (the processor died, e.g. killed during
 *   validation): REJECTED `interrupted` (only under that same claim), object deleted.
 * - Staged archive past its deadline (written under its final key, but its version never recorded): abandoned
 *   first (a conditional write that makes a late recordVersion fail), then its object and its record are deleted.
 *   A sweep dying half-way leaves it abandoned and still overdue, so the next run finishes it.
 * @throws Error on backend failures (the next run retries; every step is idempotent).
 */
export async function sweepUploads(dependencies: UploadSweepDependencies): Promise<UploadSweepResult> {
  const now = dependencies.now?.() ?? new Date();
  const nowIso = now.toISOString();
  const timeoutMs = dependencies.processingTimeoutMs ?? PROCESSING_CLAIM_TIMEOUT_MS;
  const batchSize = dependencies.batchSize ?? 200;
  const result: UploadSweepResult = { expired: [], interrupted: [], waiting: [], orphansDeleted: [] };

  for (const slot of await dependencies.uploads.overdue(nowIso, batchSize)) {
    if (slot.status === 'PENDING') {
      const object = await dependencies.archives.stat(slot.objectKey);
      const arrivedLate = object !== undefined && Date.parse(object.lastModified) > Date.parse(slot.expiresAt);
      if (object === undefined || arrivedLate) {
        if (
          await dependencies.uploads.reject(
            slot.company,
            slot.uploadId,
            { status: 'PENDING' },
            dependencies.problemOf(expiredUploadError(slot, object?.lastModified)),
          )
        ) {
          result.expired.push(slot.uploadId);
          if (object !== undefined) await dependencies.archives.delete(slot.objectKey);
        }
      } else if (now.getTime() < Date.parse(object.lastModified) + timeoutMs) {
        result.waiting.push(slot.uploadId);
      } else if (
        await dependencies.uploads.reject(
          slot.company,
          slot.uploadId,
          { status: 'PENDING' },
          dependencies.problemOf(interruptedUploadError(timeoutMs)),
        )
      ) {
        result.interrupted.push(slot.uploadId);
        await dependencies.archives.delete(slot.objectKey);
      }
    } else if (slot.status === 'PROCESSING' && slot.claimedAt !== undefined && Date.parse(slot.claimedAt) + timeoutMs <= now.getTime()) {
      const expected = { status: 'PROCESSING' as const, claimedAt: slot.claimedAt };
      if (
        await dependencies.uploads.reject(slot.company, slot.uploadId, expected, dependencies.problemOf(interruptedUploadError(timeoutMs)))
      ) {
        result.interrupted.push(slot.uploadId);
        await dependencies.archives.delete(slot.objectKey);
      }
    }
  }

  for (const staged of await dependencies.scenarios.overdueStagedArchives(nowIso, batchSize)) {
    // False: its version was recorded (or the upload discarded it) since the index was read.
    if (!(await dependencies.scenarios.abandonStagedArchive(staged.company, staged.stagedId))) continue;
    await dependencies.archives.delete(staged.archiveKey);
    await dependencies.scenarios.discardStagedArchive(staged.company, staged.stagedId);
    result.orphansDeleted.push(staged.archiveKey);
  }
  return result;
}
