/**
 * `npm run generate`: writes every file generated from the one contract, each checked by a test to be current.
 * - functions/core/scenarios/scenario.schema.json: the scenario manifest's JSON Schema, from its zod definition;
 * - client/api-types.ts: TypeScript types of every operation of the OpenAPI document (openapi-typescript), used by the
 *   typed client (client/index.ts), the CLI and the end-to-end tests;
 * - client/limits.ts: the service's limits and patterns the CLI and the console need, from the constants it enforces.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { generatedClientTypes } from '../client/generate.js';
import { generatedClientLimits } from '../client/generate-limits.js';
import { scenarioManifestJsonSchema } from '../functions/core/scenarios/manifest.js';

const root = resolve(import.meta.dirname, '..');
const outputs: Array<[string, string]> = [
  ['functions/core/scenarios/scenario.schema.json', `${JSON.stringify(scenarioManifestJsonSchema(), null, 2)}\n`],
  ['client/api-types.ts', await generatedClientTypes()],
  ['client/limits.ts', generatedClientLimits()],
];
for (const [path, contents] of outputs) {
  await writeFile(resolve(root, path), contents);
  process.stdout.write(`Wrote ${path}\n`);
}
