import JSZip from 'jszip';
import { InvalidArchiveError, type ProblemViolation } from '../errors.js';
import { type ScenarioManifest, ScenarioManifestSchema } from './manifest.js';

/** Name of the manifest at the archive root. */
export const MANIFEST_NAME = 'scenario.json';
/** Required resources directory. */
export const RESOURCES_DIRECTORY = 'resources/';

function unsafeEntryName(name: string): string | undefined {
  if (name.includes('\\')) return 'entry name contains a backslash';
  if (name.startsWith('/')) return 'entry name is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'entry name starts with a drive letter';
  if (name.split('/').includes('..')) return 'entry name contains a ".." segment';
  return undefined;
}

/**
 * Validates a scenario archive (spec "Scenario package": ZIP with scenario.json and resources/) and returns its
 * manifest. Collects every violation before failing.
 * @param archive the whole ZIP, bytes.
 * @throws InvalidArchiveError (422) with `errors: [{ path, message }]`, every violation found.
 */
export async function validateScenarioArchive(archive: Uint8Array): Promise<ScenarioManifest> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(archive, { checkCRC32: true });
  } catch (error) {
    throw new InvalidArchiveError('The upload is not a readable ZIP archive.', [
      { path: '', message: `not a valid ZIP archive (${(error as Error).message})` },
    ]);
  }
  const errors: ProblemViolation[] = [];
  const names = Object.keys(zip.files);
  for (const name of names) {
    // jszip rewrites ".." segments when loading; the name as stored in the archive is in unsafeOriginalName.
    const original = (zip.files[name] as JSZip.JSZipObject & { unsafeOriginalName?: string }).unsafeOriginalName ?? name;
    const problem = unsafeEntryName(original);
    if (problem !== undefined) errors.push({ path: original, message: problem });
  }
  if (!names.some((name) => name.startsWith(RESOURCES_DIRECTORY))) {
    errors.push({ path: RESOURCES_DIRECTORY, message: 'the resources/ directory is missing' });
  }

  let manifest: ScenarioManifest | undefined;
  const manifestEntry = zip.file(MANIFEST_NAME);
  if (manifestEntry === null) {
    errors.push({ path: MANIFEST_NAME, message: 'scenario.json is missing at the archive root' });
  } else {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await manifestEntry.async('string'));
    } catch (error) {
      errors.push({ path: MANIFEST_NAME, message: `not valid JSON (${(error as Error).message})` });
    }
    if (parsed !== undefined) {
      const result = ScenarioManifestSchema.safeParse(parsed);
      if (result.success) {
        manifest = result.data;
      } else {
        for (const issue of result.error.issues) {
          if (issue.code === 'unrecognized_keys') {
            for (const key of issue.keys) errors.push({ path: `${MANIFEST_NAME}#/${[...issue.path, key].join('/')}`, message: `unknown property '${key}'` });
          } else {
            errors.push({ path: `${MANIFEST_NAME}#/${issue.path.join('/')}`, message: issue.message });
          }
        }
      }
    }
  }

  if (manifest !== undefined) {
    manifest.thumbnails.forEach((path, index) => {
      if (zip.file(path) === null) errors.push({ path: `${MANIFEST_NAME}#/thumbnails/${index}`, message: `referenced file '${path}' is not in the archive` });
    });
    manifest.assets.forEach((path, index) => {
      if (zip.file(path) === null) errors.push({ path: `${MANIFEST_NAME}#/assets/${index}`, message: `referenced file '${path}' is not in the archive` });
    });
  }

  if (errors.length > 0) {
    throw new InvalidArchiveError(`The scenario archive has ${errors.length} problem(s); nothing was stored.`, errors);
  }
  return manifest as ScenarioManifest;
}
