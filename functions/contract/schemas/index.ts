/** Component schemas of the OpenAPI document (each carries its `components.schemas` id in its zod metadata). */
export * from './auth.js';
export * from './deployments.js';
export * from './device-side.js';
export * from './problems.js';
export * from './responses.js';
export * from './rollouts.js';
export * from './scenarios.js';
export * from './search.js';
export * from './search-filters.js';
