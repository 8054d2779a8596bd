/** Ports of the scenario area: the catalogue (reads), the repository (writes), archive storage and upload slots. */
import type { Page } from '../shared/paging.js';
import type { RecordVersionGuards, RecordVersionOutcome, ScenarioSummary, ScenarioVersion, StagedArchive, UploadSlot } from './model.js';

/** Read side of the scenario catalogue: listings with opaque cursors, all single Queries. */
export interface ScenarioCatalog {
  /** Scenarios of a company ordered by id. @throws BadRequestError on a cursor this adapter did not issue. */
  listScenarios(companyId: string, limit: number, cursor: string | undefined): Promise<Page<ScenarioSummary>>;
  /** One scenario summary, or undefined. */
  getScenario(companyId: string, scenarioId: string): Promise<ScenarioSummary | undefined>;
  /** Every stored version of a scenario, ordered by version key. */
  listVersions(companyId: string, scenarioId: string): Promise<ScenarioVersion[]>;
  /** One version, or undefined. */
  getVersion(companyId: string, scenarioId: string, version: string): Promise<ScenarioVersion | undefined>;
  /** The versions among `references` that exist, with batched reads, in no particular order. */
  getVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<ScenarioVersion[]>;
}

/** Scenario versions and their storage accounting (scenarios and companies tables). */
export interface ScenarioRepository {
  /**
   * Atomically (one DynamoDB transaction): creates the version if (company, id, version) is new, adds `size` to the
   * company's `usedBytes` only if the result stays within `quotaBytes`, and updates the scenario summary.
   */
  recordVersion(version: ScenarioVersion, guards?: RecordVersionGuards): Promise<RecordVersionOutcome>;
  /**
   * Records the intent to write `staged.archiveKey` (conditional put of a new item), before the object is written, so
   * that an archive whose version never gets recorded (the process died in between) can be found and deleted.
   */
  stageArchive(staged: StagedArchive): Promise<void>;
  /** Forgets a staged archive whose object the caller has deleted itself (a refused upload). Absent ones are ignored. */
  discardStagedArchive(company: string, stagedId: string): Promise<void>;
  /**
   * Marks a staged archive abandoned (conditional write: it still exists): from then on a recordVersion guarded by it
   * fails with `staging-abandoned`, so its object may be deleted. @returns false when it no longer exists (recorded or discarded).
   */
  abandonStagedArchive(company: string, stagedId: string): Promise<boolean>;
  /** Staged archives whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by an index query (no scan). */
  overdueStagedArchives(now: string, limit: number): Promise<StagedArchive[]>;
  /** Returns `scenarioId#version` strings of the given references that exist in `companyId`, with batched reads. */
  existingVersions(companyId: string, references: readonly { scenarioId: string; version: string }[]): Promise<Set<string>>;
}

/** A byte range reader over one stored object: what the bounded-memory archive validator reads through. */
export interface RandomAccessSource {
  /** Object size, bytes. */
  size: number;
  /** Streams bytes [start, end) of the object (end exclusive). */
  createReadStream(start: number, end: number): NodeJS.ReadableStream;
}

/** Archive object storage (S3 in AWS, s3rver locally). */
export interface ArchiveStore {
  /** Opens `key` for ranged reads (S3 GetObject with Range); undefined when absent. */
  openRandomAccess(key: string): Promise<RandomAccessSource | undefined>;
  /** Server-side copy of `sourceKey` to `targetKey` (S3 CopyObject): no bytes pass through the caller. */
  copy(sourceKey: string, targetKey: string): Promise<void>;
  /** A URL that lets its holder GET `key` until it expires (seconds); `filename` sets Content-Disposition. */
  presignGet(key: string, expiresInSeconds: number, filename: string): Promise<string>;
  /** Stores bytes under `key`. */
  put(key: string, body: Uint8Array, contentType: string): Promise<void>;
  /** Reads a whole object; undefined when absent. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Deletes `key`; absent keys are ignored. */
  delete(key: string): Promise<void>;
  /** Size (bytes) and last-modified time (ISO-8601: when its upload completed) of `key`; undefined when absent. */
  stat(key: string): Promise<{ size: number; lastModified: string } | undefined>;
  /** A URL that lets its holder PUT one object at `key` with `contentType` until it expires (seconds). */
  presignPut(key: string, contentType: string, expiresInSeconds: number): Promise<string>;
}

/** Presigned upload slots. */
export interface UploadSlotRepository {
  /** Records a new PENDING slot (with its `sweepAt`). */
  create(slot: UploadSlot): Promise<void>;
  /** Returns the slot, or undefined when `company` has no such upload. */
  get(company: string, uploadId: string): Promise<UploadSlot | undefined>;
  /**
   * Claims a slot for processing (conditional write PENDING → PROCESSING, or a PROCESSING claim older than
   * `staleBefore`, left by a processor that died): of two racing events exactly one gets true.
   */
  claim(company: string, uploadId: string, claimedAt: string, staleBefore: string, sweepAt: string): Promise<boolean>;
  /**
   * Moves a PROCESSING slot claimed at `claimedAt` to its outcome (conditional write): false when the claim was lost,
   * so a redelivered event cannot overwrite the first outcome.
   */
  complete(
    company: string,
    uploadId: string,
    claimedAt: string,
    outcome: Pick<UploadSlot, 'status' | 'result' | 'problem'>,
  ): Promise<boolean>;
  /**
   * Rejects an open slot with `problem` (conditional write): only if it is still PENDING, or still PROCESSING under
   * `claimedAt` when given, so a sweeper racing a processor never overwrites a real outcome. @returns whether it applied.
   */
  reject(
    company: string,
    uploadId: string,
    expected: { status: 'PENDING' } | { status: 'PROCESSING'; claimedAt: string },
    problem: Record<string, unknown>,
  ): Promise<boolean>;
  /** Open slots whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by an index query (no scan). */
  overdue(now: string, limit: number): Promise<UploadSlot[]>;
}
