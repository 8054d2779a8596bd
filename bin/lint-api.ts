/**
 * `npm run lint:api`: writes the generated OpenAPI document to a temporary file and lints it with Redocly CLI against
 * redocly.yaml (the recommended ruleset). Exits with Redocly's status: non-zero when the document has an error.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openApiDocument } from '../functions/contract/openapi.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Lints the document `openApiDocument()` gives (servers at their local defaults unless the environment names them).
 * @returns Redocly's exit status (0: no error; warnings allowed), its report (stdout) and its messages (stderr).
 */
export function lintOpenApiDocument(format: 'stylish' | 'json' = 'stylish'): { status: number; stdout: string; stderr: string } {
  const directory = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  try {
    const file = join(directory, 'openapi.json');
    writeFileSync(file, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
    const result = spawnSync(
      join(ROOT, 'node_modules/.bin/redocly'),
      ['lint', file, '--config', join(ROOT, 'redocly.yaml'), `--format=${format}`],
      {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
      },
    );
    if (result.error !== undefined) throw result.error;
    return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const { status, stdout, stderr } = lintOpenApiDocument();
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  process.exitCode = status;
}
