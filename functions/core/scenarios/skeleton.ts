import JSZip from 'jszip';
import { ulid } from 'ulid';
import { BadRequestError } from '../shared/errors.js';
import { type ScenarioManifest, SEMVER_PATTERN } from './manifest.js';
import { DEFAULT_SKELETON_VERSION } from './model.js';

/** A 16×16 PNG thumbnail (a blue square), so the skeleton validates as shipped. */
const THUMBNAIL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR4nGOQz39NEmIY1TCqYfhqAACg0HkQHnesywAAAABJRU5ErkJggg==',
  'base64',
);

const ARCHIVE_README = `# Scenario skeleton

This archive is a scenario package ready to edit and upload.

- \`scenario.json\`: the manifest. \`id\` identifies the scenario (keep it to add versions to the same scenario),
  \`name\` and \`description\` are shown to operators, \`version\` is a semantic version (e.g. 1.0.1) and cannot be
  reused once uploaded. \`thumbnails\` and \`assets\` list every file under \`resources/\` that the scenario uses;
  each listed file must be in the archive.
- \`resources/thumbnails/\`: images shown in the fleet console.
- \`resources/assets/\`: the files the kiosk runs (HTML, media, data).

Re-zip with scenario.json at the root of the archive (e.g. \`cd skeleton && zip -r ../my-scenario.zip .\`),
then upload it to the upload address. The JSON Schema of scenario.json is published at
GET {base_url}/companies/{id}/resources/scenarios/schema.json.
`;

const ASSET_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>My scenario</title></head>
<body><h1>Hello from my scenario</h1></body></html>
`;

/**
 * Builds the skeleton scenario archive: scenario.json with a fresh `id` and the given version,
 * resources/thumbnails/thumbnail.png, resources/assets/index.html and a README.md explaining each file.
 * @param version semantic version to put in scenario.json.
 * @returns the ZIP bytes and the generated manifest.
 * @throws BadRequestError when `version` is not a semantic version.
 */
export async function buildSkeletonArchive(
  version: string = DEFAULT_SKELETON_VERSION,
): Promise<{ archive: Uint8Array; manifest: ScenarioManifest }> {
  if (!SEMVER_PATTERN.test(version)) {
    throw new BadRequestError(`'version' must be a semantic version such as 1.0.0; got '${version}'.`, [
      { path: 'version', message: 'must be a semantic version such as 1.0.0' },
    ]);
  }
  const manifest: ScenarioManifest = {
    id: `scenario-${ulid().toLowerCase()}`,
    name: 'My scenario',
    version,
    description: 'Describe what this scenario shows on the kiosk.',
    thumbnails: ['resources/thumbnails/thumbnail.png'],
    assets: ['resources/assets/index.html'],
  };
  const zip = new JSZip();
  zip.file('scenario.json', `${JSON.stringify(manifest, null, 2)}\n`);
  zip.file('README.md', ARCHIVE_README);
  zip.folder('resources');
  zip.folder('resources/thumbnails');
  zip.folder('resources/assets');
  zip.file('resources/thumbnails/thumbnail.png', THUMBNAIL_PNG);
  zip.file('resources/assets/index.html', ASSET_HTML);
  const archive = await zip.generateAsync({ type: 'uint8array', compression: 'DEFLATE' });
  return { archive, manifest };
}
