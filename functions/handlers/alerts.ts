import { alertGet, alertsList } from '../contract/routes/alerts.js';
import { getAlert, listAlerts } from '../core/alerts/alerts.js';
import { alertStorage } from '../platform/composition/alerts.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

const list = routeHandler(alertsList, async ({ params, query }, { principal }) =>
  jsonResponse(200, await listAlerts(alertStorage(), principal, params.companyId, query)),
);

const get = routeHandler(alertGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getAlert(alertStorage(), principal, params.companyId, params.alertId)),
);

/** The alerts routes: GET …/alerts (`{ items, nextCursor }`, newest first, `state` OPEN or RESOLVED) and GET …/alerts/{alertId}. */
export const handler = routeDispatcher([
  [alertsList, list],
  [alertGet, get],
]);
