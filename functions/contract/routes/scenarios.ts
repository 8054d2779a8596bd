/** Scenario catalog routes of the main address: skeleton, manifest schema, usage, listing, one scenario, one version. */
import { defineRoute } from '../route.js';

/** GET /companies/{companyId}/resources/scenarios/skeleton.zip */
export const scenarioSkeleton = defineRoute({
  id: 'ScenarioSkeleton',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/scenarios/skeleton.zip',
  scope: 'scenarios:read',
  companyParameter: 'companyId',
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
  entry: 'functions/handlers/scenario-version-get.ts',
});
