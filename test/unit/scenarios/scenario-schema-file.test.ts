import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { scenarioManifestJsonSchema } from '../../../functions/core/scenarios/manifest.js';

describe('the JSON Schema shipped in the repository', () => {
  it('is the one the API publishes and the validator enforces (regenerate with `npm run generate`)', async () => {
    const shipped = JSON.parse(await readFile(new URL('../../../functions/core/scenarios/scenario.schema.json', import.meta.url), 'utf8'));
    expect(shipped).toEqual(scenarioManifestJsonSchema());
    expect(shipped.required).toEqual(expect.arrayContaining(['id', 'name', 'version']));
  });
});
