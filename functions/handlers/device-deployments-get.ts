import { deviceDeploymentsGet } from '../contract/routes/device-side.js';
import { deviceDesiredState } from '../core/devices/desired-state.js';
import { archiveStorage } from '../platform/composition/archives.js';
import { storage } from '../platform/composition/storage.js';
import { ifNoneMatchHolds, strongEntityTag } from '../platform/etag.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/device/deployments: the calling device's desired state, `{ items }` with `ETag`, or 304 with no body
 * when `If-None-Match` holds the current tag (then one read of the device item when it holds the stored tag, and
 * neither the versions are read nor any URL signed).
 */
export const handler = routeHandler(deviceDeploymentsGet, async (_input, { principal }, event) => {
  const { devices, deployments, catalog, commands } = storage();
  const { archives } = archiveStorage();
  const ifNoneMatch = event.headers?.['if-none-match'];
  const state = await deviceDesiredState(
    { devices, deployments, catalog, archives, commands },
    principal,
    ifNoneMatch === undefined ? undefined : (tag) => ifNoneMatchHolds(ifNoneMatch, tag),
  );
  const headers = { etag: strongEntityTag(state.tag), 'cache-control': 'private, no-cache' };
  if (state.unchanged) return { statusCode: 304, headers };
  return jsonResponse(200, { items: state.items, commands: state.commands }, headers);
});
