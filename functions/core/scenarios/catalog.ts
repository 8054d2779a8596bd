/**
 * Read side of the scenario packages: the company's scenarios and their immutable
 * versions, each version downloadable through a short-lived presigned URL, and the company's storage usage.
 */

import type { CompanyRepository } from '../shared/companies.js';
import { NotFoundError } from '../shared/errors.js';
import { IDENTIFIER_PATTERN } from '../shared/identifiers.js';
import type { ListParameters } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { highestVersion, SEMVER_PATTERN } from './manifest.js';
import type { ScenarioSummary, ScenarioVersion } from './model.js';
import type { ArchiveStore, ScenarioCatalog } from './ports.js';

/** Lifetime of a version's presigned download URL, seconds (5 minutes). */
export const DOWNLOAD_URL_LIFETIME_SECONDS = 300;

/** What the catalogue use cases need. */
export interface CatalogDependencies {
  catalog: ScenarioCatalog;
  archives: ArchiveStore;
  companies: CompanyRepository;
  now?: () => Date;
}

/** A scenario as listed: its summary and the versions stored, in upload order. */
export interface ScenarioView {
  id: string;
  name: string;
  description: string | null;
  /** Highest semantic version stored (SemVer precedence, not upload order), as in search results. */
  latestVersion: string;
  /** Stored versions, in upload order. */
  versions: string[];
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
}

/** One stored version with a presigned download of its archive. */
export interface VersionView {
  version: string;
  /** Archive size, bytes. */
  size: number;
  /** Hex SHA-256 of the archive. */
  sha256: string;
  /** `sub` of the uploader. */
  uploadedBy: string;
  /** ISO-8601 upload time. */
  created: string;
  /** GET `url` (no bearer token) before `expiresAt` to download the archive as `{scenarioId}-{version}.zip`. */
  download: { url: string; expiresAt: string };
}

/** A scenario with every stored version. */
export interface ScenarioDetailView extends Omit<ScenarioView, 'versions'> {
  /** Stored versions, in upload order. */
  versions: VersionView[];
}

/** A company's storage account, bytes. */
export interface StorageUsageView {
  quotaBytes: number;
  usedBytes: number;
  /** `quotaBytes - usedBytes`, never below 0. */
  availableBytes: number;
}

function toScenarioView(summary: ScenarioSummary): ScenarioView {
  return {
    id: summary.scenarioId,
    name: summary.name,
    description: summary.description ?? null,
    latestVersion: highestVersion(summary.versions) ?? summary.lastUploadedVersion,
    versions: [...summary.versions],
    created: summary.created,
    updated: summary.updated,
  };
}

async function toVersionView(dependencies: CatalogDependencies, version: ScenarioVersion): Promise<VersionView> {
  const now = dependencies.now?.() ?? new Date();
  const url = await dependencies.archives.presignGet(
    version.archiveKey,
    DOWNLOAD_URL_LIFETIME_SECONDS,
    `${version.scenarioId}-${version.version}.zip`,
  );
  return {
    version: version.version,
    size: version.size,
    sha256: version.sha256,
    uploadedBy: version.uploadedBy,
    created: version.created,
    download: { url, expiresAt: new Date(now.getTime() + DOWNLOAD_URL_LIFETIME_SECONDS * 1000).toISOString() },
  };
}

function scenarioNotFound(companyId: string, scenarioId: string): NotFoundError {
  return new NotFoundError(`Scenario '${scenarioId}' does not exist in company '${companyId}'.`);
}

/**
 * Lists the company's scenarios, ordered by id, one page at a time.
 * @param paging `limit` (1–1000) and `cursor` (a previous `nextCursor`), validated by the route.
 * @returns `{ items, nextCursor }`; `nextCursor` is null on the last page.
 * @throws ForbiddenError for a company outside the token.
 * @throws BadRequestError for a cursor not issued for this company's listing.
 */
export async function listScenarios(
  dependencies: Pick<CatalogDependencies, 'catalog'>,
  principal: Principal,
  companyId: string,
  { limit, cursor }: ListParameters,
): Promise<{ items: ScenarioView[]; nextCursor: string | null }> {
  authorizeCompany(principal, companyId);
  const page = await dependencies.catalog.listScenarios(companyId, limit, cursor);
  return { items: page.items.map(toScenarioView), nextCursor: page.nextCursor };
}

/**
 * One scenario with every stored version (size, sha256, uploader, upload time and a presigned download URL valid
 * 5 minutes), versions in upload order.
 * @throws ForbiddenError for a company outside the token.
 * @throws NotFoundError when the company has no such scenario.
 */
export async function getScenario(
  dependencies: CatalogDependencies,
  principal: Principal,
  companyId: string,
  scenarioId: string,
): Promise<ScenarioDetailView> {
  authorizeCompany(principal, companyId);
  if (!IDENTIFIER_PATTERN.test(scenarioId)) throw scenarioNotFound(companyId, scenarioId);
  const [summary, versions] = await Promise.all([
    dependencies.catalog.getScenario(companyId, scenarioId),
    dependencies.catalog.listVersions(companyId, scenarioId),
  ]);
  if (summary === undefined) throw scenarioNotFound(companyId, scenarioId);
  // Upload order: the summary's list is appended by each upload; ties (not expected) fall back to time, then key.
  const position = new Map(summary.versions.map((version, index) => [version, index]));
  const ordered = [...versions].sort(
    (a, b) =>
      (position.get(a.version) ?? Number.MAX_SAFE_INTEGER) - (position.get(b.version) ?? Number.MAX_SAFE_INTEGER) ||
      a.created.localeCompare(b.created) ||
      a.version.localeCompare(b.version),
  );
  const { versions: _names, ...view } = toScenarioView(summary);
  return { ...view, versions: await Promise.all(ordered.map((version) => toVersionView(dependencies, version))) };
}

/**
 * One stored version of a scenario with a presigned download URL valid 5 minutes (the `Location` of a 201 upload).
 * @throws ForbiddenError for a company outside the token.
 * @throws NotFoundError when the company has no such scenario version.
 */
export async function getScenarioVersion(
  dependencies: CatalogDependencies,
  principal: Principal,
  companyId: string,
  scenarioId: string,
  version: string,
): Promise<VersionView> {
  authorizeCompany(principal, companyId);
  const stored =
    IDENTIFIER_PATTERN.test(scenarioId) && SEMVER_PATTERN.test(version)
      ? await dependencies.catalog.getVersion(companyId, scenarioId, version)
      : undefined;
  if (stored === undefined) throw new NotFoundError(`Scenario '${scenarioId}' has no version '${version}' in company '${companyId}'.`);
  return toVersionView(dependencies, stored);
}

/**
 * The company's storage account: the quota, the bytes of stored archives (the figures a 413 reports) and what is
 * left.
 * @throws ForbiddenError for a company outside the token.
 * @throws NotFoundError when the company does not exist.
 */
export async function getStorageUsage(
  dependencies: Pick<CatalogDependencies, 'companies'>,
  principal: Principal,
  companyId: string,
): Promise<StorageUsageView> {
  authorizeCompany(principal, companyId);
  const company = await dependencies.companies.get(companyId);
  if (company === undefined) throw new NotFoundError(`Company '${companyId}' does not exist.`);
  return {
    quotaBytes: company.quotaBytes,
    usedBytes: company.usedBytes,
    availableBytes: Math.max(0, company.quotaBytes - company.usedBytes),
  };
}
