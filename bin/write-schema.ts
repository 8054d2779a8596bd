/** `npm run schema`: writes functions/core/scenarios/scenario.schema.json from the zod definition (the one source). */
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scenarioManifestJsonSchema } from '../functions/core/scenarios/manifest.js';

const target = resolve(dirname(fileURLToPath(import.meta.url)), '../functions/core/scenarios/scenario.schema.json');
await writeFile(target, `${JSON.stringify(scenarioManifestJsonSchema(), null, 2)}\n`);
process.stdout.write(`Wrote ${target}\n`);
