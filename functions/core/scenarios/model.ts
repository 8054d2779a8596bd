/** The stored shapes of scenario versions, their staged archives and presigned upload slots. */

/**
 * Default version of the skeleton download. Kept here, apart from the skeleton builder, so that the route definitions
 * that state it do not bundle the ZIP library into every scenario function.
 */
export const DEFAULT_SKELETON_VERSION = '1.0.0';

/**
 * Default lifetime of a presigned upload URL, seconds: the slot's `expiresAt` is this long after the request. Kept
 * here so that the contract stating it does not bundle the archive validation.
 */
export const UPLOAD_URL_LIFETIME_SECONDS = 900;

/** A stored, immutable scenario version. */
export interface ScenarioVersion {
  company: string;
  /** `scenario.json` `id` (`what.id`). */
  scenarioId: string;
  /** Semantic version (`what.subId`). */
  version: string;
  name: string;
  description?: string;
  /** Archive size, bytes. */
  size: number;
  /** Hex SHA-256 of the archive. */
  sha256: string;
  /** Object key of the archive in the archive store. */
  archiveKey: string;
  /** `sub` of the uploader. */
  uploadedBy: string;
  /** ISO-8601. */
  created: string;
}

/** Outcome of recording a version: stored, or refused with the reason. Nothing is written when refused. */
export type RecordVersionOutcome =
  | { kind: 'stored' }
  | { kind: 'version-exists' }
  | { kind: 'quota-exceeded'; quotaBytes: number; usedBytes: number }
  | { kind: 'company-not-found' }
  /** The guarding staged archive was abandoned by the sweeper (or is gone): nothing was recorded. */
  | { kind: 'staging-abandoned' }
  /** The guarding slot is no longer PROCESSING under this claim (rejected by the sweeper, taken over): nothing was recorded. */
  | { kind: 'claim-lost' };

/** A scenario summary: its name and the versions stored (scenarios table, `SCENARIO#{id}`). */
export interface ScenarioSummary {
  company: string;
  scenarioId: string;
  name: string;
  description?: string;
  /**
   * Most recently uploaded version (stored as the item's `latestVersion` attribute). Not what the views and search
   * call `latestVersion`: the highest by SemVer precedence (highestVersion of `versions`), which toScenarioView answers.
   */
  lastUploadedVersion: string;
  /** Stored versions in upload order. */
  versions: string[];
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
}

/**
 * An archive object written (or about to be written) under its final key whose version record is not yet written
 * (scenarios table, `STAGED#{stagedId}`). recordVersion deletes it in its transaction, so a staged archive that
 * outlives `sweepAt` belongs to an upload that never finished: the sweeper deletes its object.
 */
export interface StagedArchive {
  company: string;
  /** ULID: the last segment of the archive key. */
  stagedId: string;
  /** Final object key (archiveKeyFor). */
  archiveKey: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601: after this the upload is considered dead (longer than any processing may take). */
  sweepAt: string;
  /** Set by abandonStagedArchive: the object is being deleted and may no longer be recorded. */
  abandoned?: boolean;
}

/** What a recordVersion transaction must also check and change, atomically with the version record. */
export interface RecordVersionGuards {
  /** The staged archive of `archiveKey`: deleted by the transaction, which fails if it was abandoned or is gone. */
  stagedId: string;
  /**
   * The upload slot being processed: the transaction moves it to STORED with `result`, and fails unless it is still
   * PROCESSING under `claimedAt` (a slot the sweeper rejected never gets a version).
   */
  slot?: { uploadId: string; claimedAt: string; result: Record<string, unknown> };
}

/** State of a presigned upload: waiting for the archive, stored, or rejected with the problem a direct upload gets. */
export type UploadSlotStatus = 'PENDING' | 'PROCESSING' | 'STORED' | 'REJECTED';

/** A presigned upload slot (scenarios table, `UPLOAD#{uploadId}`). */
export interface UploadSlot {
  /** ULID. */
  uploadId: string;
  company: string;
  /** Object key the client PUTs to: `uploads/{company}/{uploadId}.zip`. */
  objectKey: string;
  /** `sub` of the caller who asked for the slot; the archive is stored in their name. */
  requestedBy: string;
  /** ISO-8601. */
  created: string;
  /** ISO-8601: the presigned URL's expiry. */
  expiresAt: string;
  status: UploadSlotStatus;
  /** ISO-8601: when a processor claimed the slot (status PROCESSING). */
  claimedAt?: string;
  /**
   * ISO-8601: when the sweeper looks at the slot if it is still open (PENDING: `expiresAt`; PROCESSING: the claim's
   * deadline). Kept only while the slot is open, so only open slots are in the sweep index.
   */
  sweepAt?: string;
  /** When STORED: the 201 body of a direct upload. */
  result?: Record<string, unknown>;
  /** When REJECTED: the problem+json body a direct upload would get (409, 413, 422). */
  problem?: Record<string, unknown>;
}
