import type { ApiName, RouteDefinition } from './route.js';
import { adminCompaniesList, adminCompanyCreate, adminCompanyGet, adminCompanyUpdate } from './routes/admin.js';
import { ADMIN_API_CLIENT_ROUTES } from './routes/admin-api-clients.js';
import { adminAuditList } from './routes/admin-audit.js';
import {
  adminUserCreate,
  adminUserDelete,
  adminUserGet,
  adminUserResetPassword,
  adminUsersList,
  adminUserUpdate,
} from './routes/admin-users.js';
import { alertGet, alertRuleCreate, alertRuleDelete, alertRuleGet, alertRulesList, alertRuleUpdate, alertsList } from './routes/alerts.js';
import { commandCancel, commandCreate, commandGet, commandsList, deviceCommandStatusPost } from './routes/commands.js';
import { consoleAsset, consolePage } from './routes/console.js';
import { deploymentsExecute, deploymentsHistory, deploymentsListAll, deploymentsListDevice } from './routes/deployments.js';
import { DEVICE_ISSUER_ROUTES } from './routes/device-issuer.js';
import { deviceDeploymentStatusPost, deviceDeploymentsGet, deviceHealthPut } from './routes/device-side.js';
import { deviceCredentialsIssue, deviceDelete, deviceGet, devicePut, devicesRegister } from './routes/devices.js';
import { authOpenIdConfiguration, authServerMetadata, DISCOVERY_ROUTES } from './routes/discovery.js';
import {
  rolloutCancel,
  rolloutCreate,
  rolloutGet,
  rolloutPause,
  rolloutPreview,
  rolloutResume,
  rolloutsList,
  rolloutTargets,
} from './routes/rollouts.js';
import { scenarioGet, scenarioList, scenarioSchema, scenarioSkeleton, scenarioUsage, scenarioVersionGet } from './routes/scenarios.js';
import { search } from './routes/search.js';
import { searchFilters } from './routes/search-filters.js';
import { apiReference, apiReferenceScript, authJwks, authRevoke, authToken, openApiDocument } from './routes/service.js';
import { scenarioUpload, scenarioUploadSlot, scenarioUploadStatus } from './routes/uploads.js';
import { WEBHOOK_ROUTES } from './routes/webhooks.js';

/**
 * The route table: one list shared by the CDK stack (API Gateway routes → Lambda functions) and the local runtime
 * (HTTP listener → the same exported handlers). Plain data: no AWS CDK imports, so the local runtime can load it.
 */

export type { ApiName, RouteDefinition } from './route.js';

/** Every HTTP route of the service. */
export const ROUTES: readonly RouteDefinition[] = [
  scenarioSkeleton,
  scenarioSchema,
  // Listed before DeploymentsListDevice: `/companies/{c}/resources/scenarios/deployments` matches both it and ScenarioGet
  // with as many static segments; matchRoute keeps the first listed. API Gateway does not document that tie, so a
  // scenario id `deployments` is best avoided (a device id `scenarios` is refused: RESERVED_DEVICE_IDS).
  scenarioUsage,
  scenarioList,
  scenarioGet,
  scenarioVersionGet,
  deploymentsExecute,
  // Three static segments after the company beat DeploymentsListDevice's `{deviceId}/deployments` (two), whatever the
  // order.
  deploymentsHistory,
  deploymentsListAll,
  deploymentsListDevice,
  // After DeploymentsListDevice: `/companies/{c}/resources/devices/deployments` matches both it and DeviceGet with as
  // many static segments; it would name the active deployments of a device `devices`, an id the registry refuses.
  devicePut,
  deviceGet,
  deviceDelete,
  devicesRegister,
  deviceCredentialsIssue,
  commandCreate,
  commandsList,
  commandGet,
  commandCancel,
  alertRuleCreate,
  alertRulesList,
  alertRuleGet,
  alertRuleUpdate,
  alertRuleDelete,
  alertsList,
  alertGet,
  ...WEBHOOK_ROUTES,
  searchFilters,
  search,
  deviceDeploymentsGet,
  deviceDeploymentStatusPost,
  deviceCommandStatusPost,
  openApiDocument,
  apiReference,
  apiReferenceScript,
  consolePage,
  consoleAsset,
  scenarioUpload,
  scenarioUploadSlot,
  scenarioUploadStatus,
  authToken,
  authRevoke,
  authJwks,
  authServerMetadata,
  authOpenIdConfiguration,
  deviceHealthPut,
  // After DeploymentsListDevice: `/companies/{c}/resources/rollouts/deployments` matches both it and RolloutGet with as
  // many static segments (a rollout id is a ULID, never `deployments`; a device id `rollouts` is refused).
  rolloutCreate,
  rolloutPreview,
  rolloutsList,
  rolloutGet,
  rolloutPause,
  rolloutResume,
  rolloutCancel,
  rolloutTargets,
  adminCompanyCreate,
  adminCompaniesList,
  adminCompanyGet,
  adminCompanyUpdate,
  adminUserCreate,
  adminUsersList,
  adminUserGet,
  adminUserUpdate,
  adminUserDelete,
  adminUserResetPassword,
  ...ADMIN_API_CLIENT_ROUTES,
  adminAuditList,
];

/**
 * The literal path segments that follow `resources` in the route paths (`DEVICE`, `deployments`, `devices`,
 * `scenarios`, `search`, `rollouts`, `cancel`, …), as a set: a device with such an id would have
 * `…/resources/{deviceId}/deployments` name another route (or match none), so the registry refuses them.
 */
export function reservedPathSegments(routes: readonly RouteDefinition[]): ReadonlySet<string> {
  const segments = new Set<string>();
  for (const route of routes) {
    const parts = route.path.split('/');
    const start = parts.indexOf('resources');
    if (start === -1) continue;
    for (const part of parts.slice(start + 1)) if (part !== '' && !/^\{\w+\}$/.test(part)) segments.add(part);
  }
  return segments;
}

/**
 * Every route served on AWS: ROUTES (the `auth` ones as their `onAws` says) but the local issuer's metadata
 * (DISCOVERY_ROUTES), and the device issuer's documents on the authentication address, which only AWS has (the local
 * runtime is its own device issuer).
 */
export const AWS_ROUTES: readonly RouteDefinition[] = [
  ...ROUTES.filter((route) => !DISCOVERY_ROUTES.includes(route)),
  ...DEVICE_ISSUER_ROUTES,
];

/** Ids no device may have (reservedPathSegments of ROUTES): a new route's segments are reserved with it. */
export const RESERVED_DEVICE_IDS = reservedPathSegments(ROUTES);

/**
 * Picks the route for a request path the way API Gateway HTTP APIs do: the most specific match wins (static
 * segments beat `{parameters}`). Returns the route and its decoded-later raw path parameters; when the path exists on
 * this address with other methods only, `methodNotAllowed` and those methods (sorted, for an `Allow` header);
 * otherwise undefined.
 */
export function matchRoute(
  routes: readonly RouteDefinition[],
  api: ApiName,
  method: string,
  path: string,
): { route: RouteDefinition; pathParameters: Record<string, string> } | { methodNotAllowed: true; allowedMethods: string[] } | undefined {
  const segments = path.split('/').slice(1);
  let best: { route: RouteDefinition; pathParameters: Record<string, string>; score: number } | undefined;
  const pathMethods = new Set<string>();
  for (const route of routes) {
    if (route.api !== api) continue;
    const template = route.path.split('/').slice(1);
    if (template.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    let score = 0;
    const matches = template.every((part, index) => {
      const segment = segments[index] as string;
      const parameter = /^\{(\w+)\}$/.exec(part);
      if (parameter !== null) {
        if (segment === '') return false;
        pathParameters[parameter[1] as string] = segment;
        return true;
      }
      score += 1;
      return part === segment;
    });
    if (!matches) continue;
    pathMethods.add(route.method);
    if (route.method !== method) continue;
    if (best === undefined || score > best.score) best = { route, pathParameters, score };
  }
  if (best !== undefined) return { route: best.route, pathParameters: best.pathParameters };
  return pathMethods.size > 0 ? { methodNotAllowed: true, allowedMethods: [...pathMethods].sort() } : undefined;
}
