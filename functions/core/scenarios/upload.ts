import { ulid } from 'ulid';
import { ConflictError, NotFoundError, PayloadTooLargeError, QuotaExceededError } from '../errors.js';
import type { ArchiveStore, CompanyRepository, RandomAccessSource, ScenarioRepository } from '../ports.js';
import { authorize, type Principal } from '../principal.js';
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
export type IncomingArchive = Uint8Array | { source: RandomAccessSource; objectKey: string };

/** Largest archive accepted by any path, bytes (5 GiB: S3's single CopyObject limit). */
export const MAX_ARCHIVE_BYTES = 5 * 1024 ** 3;

/** S3 key of a stored archive: one prefix per company keeps companies apart. */
export function archiveKeyFor(companyId: string, scenarioId: string, version: string, uploadId: string): string {
  return `companies/${companyId}/scenarios/${scenarioId}/${version}/${uploadId}.zip`;
}

/**
 * Validates and stores a scenario archive (spec endpoint 2). The archive is validated before anything is stored;
 * the version record and the quota charge are one conditional transaction; on refusal the stored object is removed,
 * so a refused upload leaves nothing behind and consumes no quota.
 * @param archive the ZIP bytes, or a stored object to read by range and copy.
 * @throws ForbiddenError (403) without `scenarios:write` on the company.
 * @throws InvalidArchiveError (422) listing every violation.
 * @throws ConflictError (409) when (id, version) already exists.
 * @throws QuotaExceededError (413) with quotaBytes, usedBytes and archiveBytes.
 * @throws NotFoundError (404) when the company does not exist.
 */
export async function uploadScenario(
  dependencies: UploadDependencies,
  principal: Principal,
  companyId: string,
  archive: IncomingArchive,
): Promise<StoredScenario> {
  authorize(principal, 'scenarios:write', companyId);
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
  const { manifest, sha256 } = await inspectScenarioArchive(archive instanceof Uint8Array ? archive : archive.source, dependencies.limits ?? DEFAULT_ARCHIVE_LIMITS);

  const created = (dependencies.now?.() ?? new Date()).toISOString();
  const archiveKey = archiveKeyFor(companyId, manifest.id, manifest.version, ulid());
  if (archive instanceof Uint8Array) await dependencies.archives.put(archiveKey, archive, 'application/zip');
  else await dependencies.archives.copy(archive.objectKey, archiveKey);
  let outcome: Awaited<ReturnType<ScenarioRepository['recordVersion']>>;
  try {
    outcome = await dependencies.scenarios.recordVersion({
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
    });
  } catch (error) {
    await dependencies.archives.delete(archiveKey).catch(() => undefined);
    throw error;
  }
  if (outcome.kind !== 'stored') {
    await dependencies.archives.delete(archiveKey);
    switch (outcome.kind) {
      case 'version-exists':
        throw new ConflictError(`Scenario '${manifest.id}' version ${manifest.version} already exists; versions are immutable, upload a new version instead.`);
      case 'quota-exceeded':
        throw quotaError(outcome.quotaBytes, outcome.usedBytes);
      case 'company-not-found':
        throw new NotFoundError(`Company '${companyId}' does not exist.`);
    }
  }
  return { id: manifest.id, version: manifest.version, name: manifest.name, size, sha256, created };
}
