/** Scenario catalog routes of the main address: skeleton, manifest schema, usage, listing, one scenario, one version. */
import { z } from 'zod';
import { DEFAULT_SKELETON_VERSION } from '../../core/scenarios/skeleton.js';
import { STORED_ARCHIVES } from '../archives.js';
import { CompanyParams, companyId, ListQuery, NoQuery, pathId, text } from '../parameters.js';
import { defineRoute } from '../route.js';

const scenarioId = pathId('scenarioId', 'The scenario id (the `id` of its scenario.json).');

/** GET /companies/{companyId}/resources/scenarios/skeleton.zip */
export const scenarioSkeleton = defineRoute({
  id: 'ScenarioSkeleton',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/skeleton.zip',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: z.strictObject({
      version: text('version', 64).optional().meta({ description: `Semantic version written into scenario.json; default ${DEFAULT_SKELETON_VERSION}.`, example: '1.0.0' }),
    }),
  },
  access: { storage: false },
  entry: 'functions/handlers/scenarios-skeleton.ts',
});

/** GET /companies/{companyId}/resources/scenarios/schema.json */
export const scenarioSchema = defineRoute({
  id: 'ScenarioSchema',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/schema.json',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery },
  access: { storage: false },
  entry: 'functions/handlers/scenarios-schema.ts',
});

/** GET /companies/{companyId}/resources/scenarios/usage */
export const scenarioUsage = defineRoute({
  id: 'ScenarioUsage',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/usage',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery },
  // Reads the company's quota and usage.
  access: { storage: true, tables: { companies: 'R' } },
  entry: 'functions/handlers/scenarios-usage.ts',
});

/** GET /companies/{companyId}/resources/scenarios */
export const scenarioList = defineRoute({
  id: 'ScenarioList',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: ListQuery },
  // Pages the scenario summaries (one Query).
  access: { storage: true, pagesListings: true, tables: { scenarios: 'R' } },
  entry: 'functions/handlers/scenarios-list.ts',
});

/** GET /companies/{companyId}/resources/scenarios/{scenarioId} */
export const scenarioGet = defineRoute({
  id: 'ScenarioGet',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/{scenarioId}',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, scenarioId }), query: NoQuery },
  // Reads a summary and its versions, presigns each version's download (stored archives live under `companies/`).
  access: { storage: true, tables: { scenarios: 'R' }, bucketGetObjectKeyPattern: STORED_ARCHIVES },
  entry: 'functions/handlers/scenarios-get.ts',
});

/** GET /companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version} */
export const scenarioVersionGet = defineRoute({
  id: 'ScenarioVersionGet',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version}',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, scenarioId, version: pathId('version', 'A semantic version of the scenario, e.g. 1.0.0.') }), query: NoQuery },
  // Reads one version, presigns its download.
  access: { storage: true, tables: { scenarios: 'R' }, bucketGetObjectKeyPattern: STORED_ARCHIVES },
  entry: 'functions/handlers/scenario-version-get.ts',
});
