import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import {
  adminApiClientCreate,
  adminApiClientDelete,
  adminApiClientGet,
  adminApiClientRotate,
  adminApiClientsList,
  adminApiClientUpdate,
} from '../contract/routes/admin-api-clients.js';
import {
  type ApiClientAdminPorts,
  createApiClient,
  deleteApiClient,
  getApiClient,
  listApiClients,
  rotateApiClientSecret,
  updateApiClient,
} from '../core/clients/admin.js';
import { apiClientStore } from '../platform/composition/api-clients.js';
import { auditLog } from '../platform/composition/audit.js';
import { storage } from '../platform/composition/storage.js';
import { userDirectory } from '../platform/composition/users.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { type HttpHandler, routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

async function ports(): Promise<ApiClientAdminPorts> {
  return { clients: apiClientStore(), users: await userDirectory(), companies: storage().companies, audit: auditLog() };
}

// An answer holding a secret: no cache keeps it (RFC 9111 §5.2.2.5).
const NO_STORE = { 'cache-control': 'no-store' };

const create = routeHandler(adminApiClientCreate, async ({ body }, { principal }) => {
  const created = await createApiClient(await ports(), principal, body);
  return jsonResponse(201, created, { location: `/admin/api-clients/${encodeURIComponent(created.clientId)}`, ...NO_STORE });
});

const list = routeHandler(adminApiClientsList, async ({ query }, { principal }) =>
  jsonResponse(200, await listApiClients(await ports(), principal, query)),
);

const get = routeHandler(adminApiClientGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getApiClient(await ports(), principal, params.clientId)),
);

const update = routeHandler(adminApiClientUpdate, async ({ params, body }, { principal }) =>
  jsonResponse(200, await updateApiClient(await ports(), principal, params.clientId, body)),
);

const remove = routeHandler(adminApiClientDelete, async ({ params }, { principal }) => {
  await deleteApiClient(await ports(), principal, params.clientId);
  return { statusCode: 204 };
});

const rotateWithBody = routeHandler(adminApiClientRotate, async ({ params, body }, { principal }) =>
  jsonResponse(200, await rotateApiClientSecret(await ports(), principal, params.clientId, body.previousSecretValidSeconds), NO_STORE),
);

/** The rotation's body is optional (`optional` in its definition): an absent or empty one is read as `{}`. */
const rotate: HttpHandler = (event, context) => {
  const absent = event.body === undefined || event.body === '';
  const read: APIGatewayProxyEventV2 = absent
    ? { ...event, body: '{}', isBase64Encoded: false, headers: { ...event.headers, 'content-type': 'application/json' } }
    : event;
  return rotateWithBody(read, context);
};

/**
 * The API clients administration routes, one function for the six (one role, one log group, one set of alarms):
 * POST {base_url}/admin/api-clients (201 with `Location`; 409 past the company's limit), GET {base_url}/admin/api-clients
 * (`{ items, nextCursor }`), GET, PATCH and DELETE {base_url}/admin/api-clients/{clientId}, and
 * POST {base_url}/admin/api-clients/{clientId}/secret (rotate).
 */
export const handler = routeDispatcher([
  [adminApiClientCreate, create],
  [adminApiClientsList, list],
  [adminApiClientGet, get],
  [adminApiClientUpdate, update],
  [adminApiClientDelete, remove],
  [adminApiClientRotate, rotate],
]);
