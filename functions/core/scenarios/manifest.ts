import * as z from 'zod';

export { compareSemanticVersions, highestVersion, SEMVER_PATTERN } from './versions.js';

import { displayText } from '../shared/display-text.js';
import { IDENTIFIER_PATTERN } from '../shared/identifiers.js';
import { SEMVER_PATTERN } from './versions.js';

const resourcePath = z
  .string()
  .regex(/^resources\/[^\\]+[^/]$/, 'must be a file path under resources/ (e.g. resources/assets/logo.png)')
  .refine((path) => !path.split('/').includes('..'), 'must not contain ".." segments');

/**
 * The `scenario.json` manifest at the root of every scenario archive (docs/contract.md, "Scenario packages").
 * This zod schema is the single source of truth: the validator uses it and the published JSON Schema is generated
 * from it (`scenarioManifestJsonSchema`).
 */
export const ScenarioManifestSchema = z
  .object({
    id: z
      .string()
      .regex(IDENTIFIER_PATTERN, 'must be 1–128 letters, digits, ".", "_" or "-", starting with a letter or digit')
      .describe('Scenario identifier: `what.id` in deployments. Uploading a new version with the same id adds a version.'),
    name: displayText(z.string().min(1).max(200), 'line').describe('Display name, one line without control characters.'),
    version: z
      .string()
      .regex(SEMVER_PATTERN, 'must be a semantic version such as 1.0.0')
      .describe('Semantic version, immutable once uploaded: `what.subId` in deployments.'),
    description: displayText(z.string().max(2000), 'prose')
      .optional()
      .describe('What the scenario does; line breaks and tabs are its only control characters.'),
    thumbnails: z.array(resourcePath).max(20).default([]).describe('Thumbnail images, paths inside the archive under resources/.'),
    assets: z
      .array(resourcePath)
      .max(10_000)
      .default([])
      .describe('Asset files the scenario uses, paths inside the archive under resources/.'),
  })
  .strict();

/** A validated `scenario.json`. */
export type ScenarioManifest = z.infer<typeof ScenarioManifestSchema>;

/** JSON Schema (draft 2020-12) of `scenario.json`, generated from ScenarioManifestSchema. */
export function scenarioManifestJsonSchema(): Record<string, unknown> {
  return {
    $id: 'https://device-scenario-service.dev/schemas/scenario.json',
    title: 'scenario.json',
    ...z.toJSONSchema(ScenarioManifestSchema, { io: 'input' }),
  };
}
