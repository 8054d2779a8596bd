/** Temporary re-export of the module's new place (removed by tools/core-imports.ts). */
export * from './devices/desired-state.js';
export { DEVICE_STATUS_STATES, type DeviceStatusState } from './deployments/model.js';
