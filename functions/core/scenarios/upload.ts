import { ulid } from 'ulid';
import { ConflictError, NotFoundError, PayloadTooLargeError, QuotaExceededError, ServiceUnavailableError } from '../shared/errors.js';
import type { ArchiveStore, RandomAccessSource, ScenarioRepository } from './ports.js';
import type { CompanyRepository } from '../shared/companies.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { type ArchiveLimits, DEFAULT_ARCHIVE_LIMITS, inspectScenarioArchive } from './archive.js';

/** The 201 body of an upload (docs/contract.md, "Scenario packages"). */
export interface StoredScenario {
  id: string;
  version: string;
  name: string;
  /** Archive size, bytes. */
  size: number;
  /** Hex SHA-256 of the archive. */
  sha256: string;
  /** ISO-8601. */
  created: string;
}

/** What the upload use case needs. */
export interface UploadDependencies {
  companies: CompanyRepository;
  scenarios: ScenarioRepository;
  archives: ArchiveStore;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /** Validation limits (defaults: DEFAULT_ARCHIVE_LIMITS). */
  limits?: ArchiveLimits;
}

/**
 * An archive to store: its bytes in memory (direct upload) or an object already in the archive store (presigned
 * upload), read by range and stored by server-side copy so that no step holds it whole.
 */
export type IncomingArchive =
  | Uint8Array
  | {
      source: RandomAccessSource;
      objectKey: string;
      /** The upload slot being processed: recording the version also moves it to STORED, only under this claim. */
      slot?: { uploadId: string; claimedAt: string };
    };

/**
 * How long after staging an archive its version must be recorded, ms (15 min: Lambda's longest run). A staged
 * archive older than this belongs to a dead process: the upload sweeper deletes its object.
 */
export const STAGED_ARCHIVE_TIMEOUT_MS = 15 * 60 * 1000;

/**
 * 503: the upload sweeper gave this upload up while it was still being stored (staging older than
 * STAGED_ARCHIVE_TIMEOUT_MS, or its slot rejected): nothing was stored; retrying the upload is safe.
 */
export class UploadAbandonedError extends ServiceUnavailableError {}

/** Largest archive accepted by any path, bytes (5 GiB: S3's single CopyObject limit). */
export const MAX_ARCHIVE_BYTES = 5 * 1024 ** 3;

/** S3 key of a stored archive: one prefix per company keeps companies apart. */
export function archiveKeyFor(companyId: string, scenarioId: string, version: string, uploadId: string): string {
  return `companies/${companyId}/scenarios/${scenarioId}/${version}/${uploadId}.zip`;
}

/**
 * Validates and stores a scenario archive. The archive is validated before anything is stored;
 * the version record and the quota charge are one conditional transaction; on refusal the stored object is removed,
 * so a refused upload leaves nothing behind and consumes no quota.
 *
 * A process can die between writing the object and recording its version. The object is therefore staged first:
 * one conditional put records the final key (`stageArchive`), then the object is written, then one transaction
 * records the version, charges the quota, deletes the staging record and, for a presigned upload, moves the slot
 * to STORED. Every state change is one conditional write, and an object without a version record always has a
 * staging record naming it, which the upload sweeper finds by its deadline (an index query) and deletes with the
 * object. The version record is not written first because the quota would then be charged, and the version
 * visible, for an archive that may never arrive.
 * @param archive the ZIP bytes, or a stored object to read by range and copy.
 * @throws ForbiddenError without `scenarios:write` on the company.
 * @throws InvalidArchiveError listing every violation.
 * @throws ConflictError when (id, version) already exists.
 * @throws QuotaExceededError with quotaBytes, usedBytes and archiveBytes.
 * @throws NotFoundError when the company does not exist.
 * @throws UploadAbandonedError when the upload sweeper gave the upload up first (nothing stored).
 */
export async function uploadScenario(
  dependencies: UploadDependencies,
  principal: Principal,
  companyId: string,
  archive: IncomingArchive,
): Promise<StoredScenario> {
  authorizeCompany(principal, companyId);
  const size = archive instanceof Uint8Array ? archive.byteLength : archive.source.size;
  if (size > MAX_ARCHIVE_BYTES) {
    throw new PayloadTooLargeError(`The archive is ${size} bytes; archives are limited to ${MAX_ARCHIVE_BYTES} bytes. Nothing was stored.`);
  }
  // Quota first: an archive that cannot fit is refused before a byte of it is read.
  const company = await dependencies.companies.get(companyId);
  if (company === undefined) throw new NotFoundError(`Company '${companyId}' does not exist.`);
  const quotaError = (quotaBytes: number, usedBytes: number) =>
    new QuotaExceededError(
      `Storing this ${size}-byte archive would exceed company '${companyId}' storage quota: ${usedBytes} of ${quotaBytes} bytes are used.`,
      { quotaBytes, usedBytes, archiveBytes: size },
    );
  if (company.usedBytes + size > company.quotaBytes) throw quotaError(company.quotaBytes, company.usedBytes);
  // One pass validates every entry and hashes the archive.
  const { manifest, sha256 } = await inspectScenarioArchive(
    archive instanceof Uint8Array ? archive : archive.source,
    dependencies.limits ?? DEFAULT_ARCHIVE_LIMITS,
  );

  const now = dependencies.now?.() ?? new Date();
  const created = now.toISOString();
  const stagedId = ulid(now.getTime());
  const archiveKey = archiveKeyFor(companyId, manifest.id, manifest.version, stagedId);
  const stored: StoredScenario = { id: manifest.id, version: manifest.version, name: manifest.name, size, sha256, created };
  await dependencies.scenarios.stageArchive({
    company: companyId,
    stagedId,
    archiveKey,
    created,
    sweepAt: new Date(now.getTime() + STAGED_ARCHIVE_TIMEOUT_MS).toISOString(),
  });
  // Removes what this call wrote; a failure here leaves the staging record, and the sweeper finishes the job.
  const discard = async () => {
    await dependencies.archives.delete(archiveKey);
    await dependencies.scenarios.discardStagedArchive(companyId, stagedId);
  };
  let outcome: Awaited<ReturnType<ScenarioRepository['recordVersion']>>;
  try {
    if (archive instanceof Uint8Array) await dependencies.archives.put(archiveKey, archive, 'application/zip');
    else await dependencies.archives.copy(archive.objectKey, archiveKey);
    const slot = archive instanceof Uint8Array ? undefined : archive.slot;
    outcome = await dependencies.scenarios.recordVersion(
      {
        company: companyId,
        scenarioId: manifest.id,
        version: manifest.version,
        name: manifest.name,
        ...(manifest.description === undefined ? {} : { description: manifest.description }),
        size,
        sha256,
        archiveKey,
        uploadedBy: principal.subject,
        created,
      },
      { stagedId, ...(slot === undefined ? {} : { slot: { ...slot, result: { ...stored } } }) },
    );
  } catch (error) {
    await discard().catch(() => undefined);
    throw error;
  }
  if (outcome.kind !== 'stored') {
    await discard();
    switch (outcome.kind) {
      case 'version-exists':
        throw new ConflictError(
          `Scenario '${manifest.id}' version ${manifest.version} already exists; versions are immutable, upload a new version instead.`,
        );
      case 'quota-exceeded':
        throw quotaError(outcome.quotaBytes, outcome.usedBytes);
      case 'company-not-found':
        throw new NotFoundError(`Company '${companyId}' does not exist.`);
      case 'staging-abandoned':
      case 'claim-lost':
        throw new UploadAbandonedError('The upload took too long and was given up; nothing was stored. Upload the archive again.');
    }
  }
  return stored;
}
