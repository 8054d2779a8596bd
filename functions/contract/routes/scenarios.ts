/** Scenario catalog routes of the main address: skeleton, manifest schema, usage, listing, one scenario, one version. */
import * as z from 'zod';
import { DOWNLOAD_URL_LIFETIME_SECONDS } from '../../core/scenarios/catalog.js';
import { DEFAULT_SKELETON_VERSION } from '../../core/scenarios/model.js';
import { STORED_ARCHIVES } from '../archives.js';
import { CompanyParams, companyId, ListQuery, NoQuery, pathId, text } from '../parameters.js';
import { defineRoute } from '../route.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, problem } from '../schemas/responses.js';
import { JsonSchemaDocument, ScenarioDetail, ScenarioPage, ScenarioVersion, StorageUsage, ZipArchive } from '../schemas/scenarios.js';

const scenarioId = pathId('scenarioId', 'The scenario id (the `id` of its scenario.json).');

/** GET /companies/{companyId}/resources/scenarios/skeleton.zip */
export const scenarioSkeleton = defineRoute({
  id: 'ScenarioSkeleton',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/skeleton.zip',
  summary: 'Download a skeleton scenario archive',
  description:
    'A ZIP with scenario.json (fresh `id`, the requested `version`), resources/thumbnails, resources/assets and a README explaining each file. Needs `scenarios:read` on the company.',
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: z.strictObject({
      version: text('version', 64)
        .optional()
        .meta({ description: `Semantic version written into scenario.json; default ${DEFAULT_SKELETON_VERSION}.`, example: '1.0.0' }),
    }),
  },
  access: { storage: false },
  entry: 'functions/handlers/scenarios-skeleton.ts',
  responses: {
    200: {
      description: 'The skeleton archive.',
      schema: ZipArchive,
      contentType: 'application/zip',
      headers: { 'Content-Disposition': HEADERS['Content-Disposition'] },
    },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** GET /companies/{companyId}/resources/scenarios/schema.json */
export const scenarioSchema = defineRoute({
  id: 'ScenarioSchema',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/schema.json',
  summary: 'Get the JSON Schema of scenario.json',
  description:
    'The JSON Schema (draft 2020-12) that uploaded scenario.json files must satisfy; the same as `#/components/schemas/ScenarioManifest`. Needs `scenarios:read` on the company.',
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery },
  access: { storage: false },
  entry: 'functions/handlers/scenarios-schema.ts',
  responses: {
    200: { description: 'A JSON Schema document.', schema: JsonSchemaDocument, contentType: 'application/schema+json' },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** GET /companies/{companyId}/resources/scenarios/usage */
export const scenarioUsage = defineRoute({
  id: 'ScenarioUsage',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/usage',
  summary: "Get the company's storage usage",
  description:
    'The storage quota, the bytes used by stored archives and the bytes available: the figures a 413 upload answer reports. Needs `scenarios:read` on the company.',
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: NoQuery },
  // Reads the company's quota and usage.
  access: { storage: true, tables: { companies: 'R' } },
  entry: 'functions/handlers/scenarios-usage.ts',
  responses: {
    200: { description: 'The storage account.', schema: StorageUsage },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company does not exist.'),
  },
});

/** GET /companies/{companyId}/resources/scenarios */
export const scenarioList = defineRoute({
  id: 'ScenarioList',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios',
  summary: "List the company's scenarios",
  description:
    'Scenarios ordered by id, with their stored versions, paginated with `limit` and `cursor`. Needs `scenarios:read` on the company.',
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: ListQuery },
  // Pages the scenario summaries (one Query).
  access: { storage: true, pagesListings: true, tables: { scenarios: 'R' } },
  entry: 'functions/handlers/scenarios-list.ts',
  responses: {
    200: { description: 'A page of scenarios.', schema: ScenarioPage },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** GET /companies/{companyId}/resources/scenarios/{scenarioId} */
export const scenarioGet = defineRoute({
  id: 'ScenarioGet',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/{scenarioId}',
  summary: 'Get a scenario and its versions',
  description: `Every stored version with its size, SHA-256, uploader, upload time and a presigned download URL valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes. Needs \`scenarios:read\` on the company.`,
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, scenarioId }), query: NoQuery },
  // Reads a summary and its versions, presigns each version's download (stored archives live under `companies/`).
  access: { storage: true, tables: { scenarios: 'R' }, bucketGetObjectKeyPattern: STORED_ARCHIVES },
  entry: 'functions/handlers/scenarios-get.ts',
  responses: {
    200: { description: 'The scenario.', schema: ScenarioDetail },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company has no such scenario.'),
  },
});

/** GET /companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version} */
export const scenarioVersionGet = defineRoute({
  id: 'ScenarioVersionGet',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/{scenarioId}/versions/{version}',
  summary: 'Get a scenario version',
  description: `The address a 201 upload's \`Location\` points to: the version's size, SHA-256, uploader, upload time and a presigned download URL valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes. Needs \`scenarios:read\` on the company.`,
  tags: ['Scenarios'],
  scope: 'scenarios:read',
  companyParameter: 'companyId',
  request: {
    params: z.object({ companyId, scenarioId, version: pathId('version', 'A semantic version of the scenario, e.g. 1.0.0.') }),
    query: NoQuery,
  },
  // Reads one version, presigns its download.
  access: { storage: true, tables: { scenarios: 'R' }, bucketGetObjectKeyPattern: STORED_ARCHIVES },
  entry: 'functions/handlers/scenario-version-get.ts',
  responses: {
    200: { description: 'The version.', schema: ScenarioVersion },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The company has no such scenario version.'),
  },
});
