/**
 * The ids no device may have, as a plain list: the literal path segments that follow `resources` in the route paths
 * (reservedPathSegments of ROUTES, functions/contract/routes.ts). Kept apart from the route table so that the device
 * registration functions do not load every route's schemas to refuse them; test/unit/devices/reserved-device-ids.test.ts
 * fails when a route adds a segment this list lacks (or drops one it has).
 */
export const RESERVED_DEVICE_IDS: ReadonlySet<string> = new Set([
  'scenarios',
  'skeleton.zip',
  'schema.json',
  'usage',
  'versions',
  'deployments',
  'history',
  'DEVICE',
  'devices',
  'credentials',
  'commands',
  'cancel',
  'search',
  'filters',
  'uploads',
  'rollouts',
  'preview',
  'pause',
  'resume',
  'targets',
]);
