import { ulid } from 'ulid';
import type { CompanyRepository } from '../shared/companies.js';
import { ConflictError, NotFoundError, PayloadTooLargeError, QuotaExceededError, ServiceUnavailableError } from '../shared/errors.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { type ArchiveLimits, DEFAULT_ARCHIVE_LIMITS, inspectScenarioArchive } from './archive.js';
import type { ScenarioManifest } from './manifest.js';
import type { ArchiveStore, RandomAccessSource, ScenarioRepository } from './ports.js';

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
  await admitArchiveSize(dependencies, companyId, size);
  // One pass validates every entry and hashes the archive.
  const { manifest, sha256 } = await inspectScenarioArchive(
    archive instanceof Uint8Array ? archive : archive.source,
    dependencies.limits ?? DEFAULT_ARCHIVE_LIMITS,
  );

  const now = dependencies.now?.() ?? new Date();
  const created = now.toISOString();
  const stagedId = ulid(now.getTime());
  const staged: StagedArchive = { companyId, stagedId, archiveKey: archiveKeyFor(companyId, manifest.id, manifest.version, stagedId) };
  const stored: StoredScenario = { id: manifest.id, version: manifest.version, name: manifest.name, size, sha256, created };
  await dependencies.scenarios.stageArchive({
    company: companyId,
    stagedId,
    archiveKey: staged.archiveKey,
    created,
    sweepAt: new Date(now.getTime() + STAGED_ARCHIVE_TIMEOUT_MS).toISOString(),
  });
  const outcome = await storeAndRecordVersion(dependencies, principal, archive, manifest, stored, staged);
  if (outcome.kind !== 'stored') {
    await discardStaged(dependencies, staged);
    throw refusalOf(outcome, manifest, companyId, size);
  }
  return stored;
}

/** An archive staged under its final key, before its version is recorded. */
interface StagedArchive {
  companyId: string;
  stagedId: string;
  archiveKey: string;
}

/** What recording a version may answer other than `stored`. */
type RecordRefusal = Exclude<Awaited<ReturnType<ScenarioRepository['recordVersion']>>, { kind: 'stored' }>;

/**
 * Refuses an archive larger than MAX_ARCHIVE_BYTES, or one that cannot fit the company's quota, before a byte of it
 * is read.
 * @throws PayloadTooLargeError (413); NotFoundError (404) when the company does not exist; QuotaExceededError (413)
 */
async function admitArchiveSize(dependencies: UploadDependencies, companyId: string, size: number): Promise<void> {
  if (size > MAX_ARCHIVE_BYTES) {
    throw new PayloadTooLargeError(`The archive is ${size} bytes; archives are limited to ${MAX_ARCHIVE_BYTES} bytes. Nothing was stored.`);
  }
  // Quota first: an archive that cannot fit is refused before a byte of it is read.
  const company = await dependencies.companies.get(companyId);
  if (company === undefined) throw new NotFoundError(`Company '${companyId}' does not exist.`);
  if (company.usedBytes + size > company.quotaBytes) throw quotaError(companyId, size, company.quotaBytes, company.usedBytes);
}

/** The 413 of a `size`-byte archive that the company's quota cannot hold. */
function quotaError(companyId: string, size: number, quotaBytes: number, usedBytes: number): QuotaExceededError {
  return new QuotaExceededError(
    `Storing this ${size}-byte archive would exceed company '${companyId}' storage quota: ${usedBytes} of ${quotaBytes} bytes are used.`,
    { quotaBytes, usedBytes, archiveBytes: size },
  );
}

/**
 * Writes the staged object (a put of the bytes, or a copy of the uploaded object) and records the version in one
 * transaction; on a failure, removes what was written and rethrows.
 * @returns the repository's outcome: `stored`, or why the version was refused.
 */
async function storeAndRecordVersion(
  dependencies: UploadDependencies,
  principal: Principal,
  archive: IncomingArchive,
  manifest: ScenarioManifest,
  stored: StoredScenario,
  staged: StagedArchive,
): Promise<Awaited<ReturnType<ScenarioRepository['recordVersion']>>> {
  const { companyId, stagedId, archiveKey } = staged;
  try {
    if (archive instanceof Uint8Array) await dependencies.archives.put(archiveKey, archive, 'application/zip');
    else await dependencies.archives.copy(archive.objectKey, archiveKey);
    const slot = archive instanceof Uint8Array ? undefined : archive.slot;
    return await dependencies.scenarios.recordVersion(
      {
        company: companyId,
        scenarioId: manifest.id,
        version: manifest.version,
        name: manifest.name,
        ...(manifest.description === undefined ? {} : { description: manifest.description }),
        size: stored.size,
        sha256: stored.sha256,
        archiveKey,
        uploadedBy: principal.subject,
        created: stored.created,
      },
      { stagedId, ...(slot === undefined ? {} : { slot: { ...slot, result: { ...stored } } }) },
    );
  } catch (error) {
    await discardStaged(dependencies, staged).catch(() => undefined);
    throw error;
  }
}

/** Removes what an upload wrote; a failure here leaves the staging record, and the sweeper finishes the job. */
async function discardStaged(dependencies: UploadDependencies, staged: StagedArchive): Promise<void> {
  await dependencies.archives.delete(staged.archiveKey);
  await dependencies.scenarios.discardStagedArchive(staged.companyId, staged.stagedId);
}

/** The error a refused version record answers (409, 413, 404 or 503). */
function refusalOf(outcome: RecordRefusal, manifest: ScenarioManifest, companyId: string, size: number): Error {
  switch (outcome.kind) {
    case 'version-exists':
      return new ConflictError(
        `Scenario '${manifest.id}' version ${manifest.version} already exists; versions are immutable, upload a new version instead.`,
      );
    case 'quota-exceeded':
      return quotaError(companyId, size, outcome.quotaBytes, outcome.usedBytes);
    case 'company-not-found':
      return new NotFoundError(`Company '${companyId}' does not exist.`);
    case 'staging-abandoned':
    case 'claim-lost':
      return new UploadAbandonedError('The upload took too long and was given up; nothing was stored. Upload the archive again.');
  }
}
