/** Temporary re-export of this module's new place, kept until every importer names that place (then deleted). */
export * from './devices/desired-state.js';
export { DEVICE_STATUS_STATES, type DeviceStatusState } from './deployments/model.js';
