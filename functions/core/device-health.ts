/** Temporary re-export of this module's new place, kept until every importer names that place (then deleted). */
export * from './devices/health.js';
