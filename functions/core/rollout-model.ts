/** Temporary re-export of the module's new place (removed by tools/core-imports.ts). */
export * from './rollouts/model.js';
