/**
 * `npm run lint` and `npm run format`: runs Biome (biome.json) with the arguments given. Biome ships one native binary
 * per platform; the project depends on the Linux builds directly (optional dependencies), because the registry it is
 * installed from serves no other platform's build, which made `npm ci` of the `@biomejs/biome` wrapper fail.
 * Exits with Biome's status; elsewhere, says how to run it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const binary = join(ROOT, 'node_modules', '@biomejs', `cli-${process.platform}-${process.arch}`, 'biome');

if (!existsSync(binary)) {
  console.error(
    `No Biome binary for ${process.platform}-${process.arch} in node_modules; run \`npx @biomejs/biome@2.6.8 ${process.argv.slice(2).join(' ')}\`.`,
  );
  process.exit(1);
}
const result = spawnSync(binary, process.argv.slice(2), { cwd: ROOT, stdio: 'inherit' });
process.exit(result.status ?? 1);
