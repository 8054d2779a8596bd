import type { Readable } from 'node:stream';
import { InvalidArchiveError, type ProblemViolation } from '../shared/errors.js';
import { type ScannedEntry, unsafeEntryName } from './archive-entry.js';
import { checkEntriesInOnePass } from './archive-pass.js';
import { type ScenarioManifest, ScenarioManifestSchema } from './manifest.js';
import { NotAZipArchiveError, openZipArchive, type ZipArchive, type ZipEntry, type ZipInput } from './zip-reader.js';

/** Name of the manifest at the archive root. */
export const MANIFEST_NAME = 'scenario.json';
/** Required resources directory. */
export const RESOURCES_DIRECTORY = 'resources/';

/** Limits that keep a hostile archive from hurting the service. */
export interface ArchiveLimits {
  /** Most entries (files and directories) in one archive. */
  maxEntries: number;
  /** Most declared uncompressed bytes, all entries together. */
  maxUncompressedBytes: number;
  /** Highest uncompressed/compressed ratio of one entry (zip bombs)... */
  maxCompressionRatio: number;
  /** ...checked only on entries whose declared uncompressed size exceeds this many bytes (small text compresses well). */
  compressionRatioMinBytes: number;
  /** Largest scenario.json, bytes. */
  maxManifestBytes: number;
  /** Entries whose data is read (CRC check) at the same time. */
  readConcurrency: number;
}

/** The limits in force unless a caller passes others. */
export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxEntries: 10_000,
  maxUncompressedBytes: 4 * 1024 ** 3,
  maxCompressionRatio: 100,
  compressionRatioMinBytes: 1024 * 1024,
  maxManifestBytes: 1024 * 1024,
  readConcurrency: 4,
};

/** What the validator reads: the whole archive in memory, or a ranged reader over a stored object. */
export type ArchiveInput = ZipInput;

/** Unix file type bits of an entry, when it was made on a Unix-like system (0 otherwise). */
function unixFileType(entry: ZipEntry): number {
  const madeBy = entry.versionMadeBy >> 8;
  return madeBy === 3 || madeBy === 19 ? (entry.externalFileAttributes >>> 16) & 0o170000 : 0;
}

async function readAll(stream: Readable, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      stream.destroy();
      throw new Error(`more than ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * Validates a scenario archive without holding it in memory: it reads
 * the ZIP central directory and `scenario.json` by range, and streams every entry once to check its CRC-32.
 * Collects every violation, each with its path: not a ZIP or truncated; scenario.json missing, not JSON, not
 * valid against the schema (including a version that is not semantic); resources/ missing; a referenced file
 * absent; entry names that are absolute, contain `..`, backslashes or drive letters; symbolic links; encrypted
 * entries; duplicate names; unsupported compression; more entries, more declared bytes or a higher per-entry
 * compression ratio than `limits` allow; CRC or size mismatches.
 * Every entry's data is checked in ONE sequential pass over the archive, as `unzip -t` does (local headers, gaps and
 * overlaps, inflation, CRC-32), and the same bytes feed the archive's SHA-256: a stored object costs a few ranged
 * reads whatever its number of entries.
 * @returns the manifest and the archive's hex SHA-256.
 * @throws InvalidArchiveError with `errors: [{ path, message }]`.
 */
export async function inspectScenarioArchive(
  input: ArchiveInput,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<{ manifest: ScenarioManifest; sha256: string }> {
  let archive: ZipArchive;
  try {
    archive = await openZipArchive(input, { maxEntries: limits.maxEntries });
  } catch (error) {
    if (!(error instanceof NotAZipArchiveError)) throw error;
    throw new InvalidArchiveError('The upload is not a readable ZIP archive; nothing was stored.', [
      { path: '', message: `not a valid ZIP archive (${error.message})` },
    ]);
  }
  try {
    return await validateOpenArchive(input, archive, limits);
  } finally {
    archive.close();
  }
}

/** validateScenarioArchive without the hash: resolves to the manifest. @throws InvalidArchiveError. */
export async function validateScenarioArchive(
  input: ArchiveInput,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<ScenarioManifest> {
  return (await inspectScenarioArchive(input, limits)).manifest;
}

/** Throws the archive's violations. @throws InvalidArchiveError (422) listing `errors` */
function failWith(errors: ProblemViolation[]): never {
  throw new InvalidArchiveError(`The scenario archive has ${errors.length} problem(s); nothing was stored.`, errors);
}

/**
 * Validates an opened archive: its central directory's entries, scenario.json and the files it references, then
 * every entry's data in one pass (checkEntriesInOnePass).
 * @returns the manifest and the archive's hex SHA-256.
 * @throws InvalidArchiveError (422) listing every violation found.
 */
async function validateOpenArchive(
  input: ArchiveInput,
  archive: ZipArchive,
  limits: ArchiveLimits,
): Promise<{ manifest: ScenarioManifest; sha256: string }> {
  const { directoryStart } = archive;
  const errors: ProblemViolation[] = [];
  if (archive.entryCount > limits.maxEntries) {
    errors.push({ path: '', message: `the archive has ${archive.entryCount} entries; at most ${limits.maxEntries} are allowed` });
    failWith(errors);
  }
  const { scanned, declaredTotal } = await scanEntries(archive, limits, errors);
  const tooLarge = declaredTotal > limits.maxUncompressedBytes;
  if (tooLarge) {
    errors.push({
      path: '',
      message: `the entries declare ${declaredTotal} uncompressed bytes; at most ${limits.maxUncompressedBytes} are allowed`,
    });
  }

  const files = new Set(scanned.filter((item) => !item.directory).map((item) => item.name));
  if (!scanned.some((item) => item.name.startsWith(RESOURCES_DIRECTORY))) {
    errors.push({ path: RESOURCES_DIRECTORY, message: 'the resources/ directory is missing' });
  }
  const manifest = await checkManifest(archive, scanned, limits, errors);
  if (manifest !== undefined) checkReferencedFiles(manifest, files, errors);

  const sha256 = tooLarge ? '' : await checkEntriesInOnePass(input, scanned, directoryStart, errors);
  if (errors.length > 0) failWith(errors);
  return { manifest: manifest as ScenarioManifest, sha256 };
}

/**
 * Reads the central directory's entries, checking each (checkEntry), and totals their declared uncompressed bytes.
 * @throws InvalidArchiveError (422) when the central directory is truncated or corrupt
 */
async function scanEntries(
  archive: ZipArchive,
  limits: ArchiveLimits,
  errors: ProblemViolation[],
): Promise<{ scanned: ScannedEntry[]; declaredTotal: number }> {
  const scanned: ScannedEntry[] = [];
  const seen = new Set<string>();
  let declaredTotal = 0;
  try {
    for await (const item of archive.entries()) {
      if ('broken' in item) {
        errors.push({ path: item.broken.name, message: `entry cannot be read safely (${item.broken.message})` });
        continue;
      }
      const entry = item;
      const directory = entry.name.endsWith('/');
      const readable = checkEntry(entry, directory, seen, limits, errors);
      declaredTotal += entry.uncompressedSize;
      scanned.push({ name: entry.name, entry, directory, readable });
    }
  } catch (error) {
    errors.push({ path: '', message: `the archive is truncated or corrupt (${(error as Error).message})` });
    failWith(errors);
  }
  return { scanned, declaredTotal };
}

/**
 * Checks one central directory entry (names, stored sizes, duplicates, links, encryption, method, compression
 * ratio), pushing its violations and adding its name to `seen`.
 * @returns whether its data may be read: a file, not encrypted, not a link, a supported method, not a bomb.
 */
function checkEntry(entry: ZipEntry, directory: boolean, seen: Set<string>, limits: ArchiveLimits, errors: ProblemViolation[]): boolean {
  const { name, rawName } = entry;
  let readable = !directory;
  // Tools that ignore the Info-ZIP Unicode Path field use the raw name: both must be safe.
  for (const candidate of new Set([name, rawName])) {
    const problem = unsafeEntryName(candidate);
    if (problem !== undefined) errors.push({ path: candidate, message: problem });
  }
  if (!directory && entry.compressionMethod === 0 && entry.compressedSize !== entry.uncompressedSize + (entry.encrypted ? 12 : 0)) {
    errors.push({
      path: name,
      message: `stored entry sizes differ: ${entry.compressedSize} compressed, ${entry.uncompressedSize} uncompressed bytes`,
    });
    readable = false;
  }
  if (seen.has(name)) errors.push({ path: name, message: 'duplicate entry name' });
  seen.add(name);
  if (unixFileType(entry) === 0o120000) {
    errors.push({ path: name, message: 'symbolic links are not allowed' });
    readable = false;
  }
  if (entry.encrypted) {
    errors.push({ path: name, message: 'encrypted entries are not allowed' });
    readable = false;
  } else if (!directory && entry.compressionMethod !== 0 && entry.compressionMethod !== 8) {
    errors.push({ path: name, message: `unsupported compression method ${entry.compressionMethod} (use stored or deflate)` });
    readable = false;
  }
  if (
    !directory &&
    entry.uncompressedSize > limits.compressionRatioMinBytes &&
    entry.uncompressedSize > Math.max(entry.compressedSize, 1) * limits.maxCompressionRatio
  ) {
    const ratio = Math.round(entry.uncompressedSize / Math.max(entry.compressedSize, 1));
    errors.push({ path: name, message: `compression ratio ${ratio}:1 exceeds the limit of ${limits.maxCompressionRatio}:1` });
    readable = false;
  }
  return readable;
}

/** The archive's scenario.json when it is there, within maxManifestBytes, readable and valid; else pushes why not. */
async function checkManifest(
  archive: ZipArchive,
  scanned: ScannedEntry[],
  limits: ArchiveLimits,
  errors: ProblemViolation[],
): Promise<ScenarioManifest | undefined> {
  const manifestEntry = scanned.find((item) => item.name === MANIFEST_NAME);
  if (manifestEntry === undefined) {
    errors.push({ path: MANIFEST_NAME, message: 'scenario.json is missing at the archive root' });
  } else if (manifestEntry.entry.uncompressedSize > limits.maxManifestBytes) {
    errors.push({ path: MANIFEST_NAME, message: `scenario.json is larger than ${limits.maxManifestBytes} bytes` });
  } else if (manifestEntry.readable) {
    return await readManifest(archive, manifestEntry, limits, errors);
  }
  return undefined;
}

/** Pushes a violation for each thumbnail and asset of the manifest that is not a file of the archive. */
function checkReferencedFiles(manifest: ScenarioManifest, files: ReadonlySet<string>, errors: ProblemViolation[]): void {
  manifest.thumbnails.forEach((path, index) => {
    if (!files.has(path))
      errors.push({ path: `${MANIFEST_NAME}#/thumbnails/${index}`, message: `referenced file '${path}' is not in the archive` });
  });
  manifest.assets.forEach((path, index) => {
    if (!files.has(path))
      errors.push({ path: `${MANIFEST_NAME}#/assets/${index}`, message: `referenced file '${path}' is not in the archive` });
  });
}

async function readManifest(
  archive: ZipArchive,
  item: ScannedEntry,
  limits: ArchiveLimits,
  errors: ProblemViolation[],
): Promise<ScenarioManifest | undefined> {
  let text: string;
  try {
    text = (await readAll(await archive.openEntry(item.entry), limits.maxManifestBytes)).toString('utf8');
  } catch (error) {
    errors.push({ path: MANIFEST_NAME, message: `scenario.json cannot be read (${(error as Error).message})` });
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    errors.push({ path: MANIFEST_NAME, message: `not valid JSON (${(error as Error).message})` });
    return undefined;
  }
  const result = ScenarioManifestSchema.safeParse(parsed);
  if (result.success) return result.data;
  for (const issue of result.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys)
        errors.push({ path: `${MANIFEST_NAME}#/${[...issue.path, key].join('/')}`, message: `unknown property '${key}'` });
    } else {
      errors.push({ path: `${MANIFEST_NAME}#/${issue.path.join('/')}`, message: issue.message });
    }
  }
  return undefined;
}
