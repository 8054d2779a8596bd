import {
  webhookCreate,
  webhookDelete,
  webhookDeliveriesList,
  webhookDeliveryGet,
  webhookDeliveryRedeliver,
  webhookGet,
  webhookSecretRotate,
  webhooksList,
  webhookTest,
  webhookUpdate,
} from '../contract/routes/webhooks.js';
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookAdminDependencies,
} from '../core/webhooks/admin.js';
import { type DeliveryAdminDependencies, getDelivery, listDeliveries, redeliver, testWebhook } from '../core/webhooks/delivery-admin.js';
import { storage } from '../platform/composition/storage.js';
import { auditedWebhookStore, deliveryStore, webhookSettings, webhookStore } from '../platform/composition/webhooks.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY, or with a malformed WEBHOOK_ALLOWED_HTTP_HOSTS, fails its
// initialization, naming the variable.
storage().cursors.load();
webhookSettings();

const admin = (): WebhookAdminDependencies => ({
  webhooks: auditedWebhookStore(),
  allowedHttpHosts: webhookSettings().allowedHttpHosts,
});
const deliveries = (): DeliveryAdminDependencies => ({ webhooks: webhookStore(), deliveries: deliveryStore() });
const webhookPath = (companyId: string, webhookId: string) =>
  `/companies/${encodeURIComponent(companyId)}/webhooks/${encodeURIComponent(webhookId)}`;

const create = routeHandler(webhookCreate, async ({ params, body }, { principal }) => {
  const webhook = await createWebhook(admin(), principal, params.companyId, body);
  return jsonResponse(201, webhook, { location: webhookPath(params.companyId, webhook.id) });
});

const list = routeHandler(webhooksList, async ({ params, query }, { principal }) =>
  jsonResponse(200, await listWebhooks(admin(), principal, params.companyId, query)),
);

const get = routeHandler(webhookGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getWebhook(admin(), principal, params.companyId, params.webhookId)),
);

const update = routeHandler(webhookUpdate, async ({ params, body }, { principal }) =>
  jsonResponse(200, await updateWebhook(admin(), principal, params.companyId, params.webhookId, body)),
);

const remove = routeHandler(webhookDelete, async ({ params }, { principal }) => {
  await deleteWebhook(admin(), principal, params.companyId, params.webhookId);
  return { statusCode: 204 };
});

const rotate = routeHandler(webhookSecretRotate, async ({ params }, { principal }) =>
  jsonResponse(200, await rotateWebhookSecret(admin(), principal, params.companyId, params.webhookId)),
);

const test = routeHandler(webhookTest, async ({ params }, { principal }) => {
  const delivery = await testWebhook(deliveries(), principal, params.companyId, params.webhookId);
  return jsonResponse(202, delivery, { location: `${webhookPath(params.companyId, params.webhookId)}/deliveries/${delivery.id}` });
});

const deliveriesList = routeHandler(webhookDeliveriesList, async ({ params, query }, { principal }) =>
  jsonResponse(200, await listDeliveries(deliveries(), principal, params.companyId, params.webhookId, query)),
);

const deliveryGet = routeHandler(webhookDeliveryGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getDelivery(deliveries(), principal, params.companyId, params.webhookId, params.deliveryId)),
);

const deliveryRedeliver = routeHandler(webhookDeliveryRedeliver, async ({ params }, { principal }) =>
  jsonResponse(202, await redeliver(deliveries(), principal, params.companyId, params.webhookId, params.deliveryId)),
);

/**
 * The webhooks routes of a company, one function for the ten: POST|GET …/webhooks (201 with the secret and
 * `Location`; a page oldest first), GET|PATCH|DELETE …/webhooks/{webhookId}, POST …/secret (200 with the new secret),
 * POST …/test (202 with the delivery), GET …/deliveries (newest first), GET …/deliveries/{deliveryId} and POST
 * …/deliveries/{deliveryId}/redeliver (202).
 */
export const handler = routeDispatcher([
  [webhookCreate, create],
  [webhooksList, list],
  [webhookGet, get],
  [webhookUpdate, update],
  [webhookDelete, remove],
  [webhookSecretRotate, rotate],
  [webhookTest, test],
  [webhookDeliveriesList, deliveriesList],
  [webhookDeliveryGet, deliveryGet],
  [webhookDeliveryRedeliver, deliveryRedeliver],
]);
