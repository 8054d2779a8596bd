/**
 * Webhooks (docs/webhooks.md, "API"): a company's subscriptions to its events, their signing secrets, a test event,
 * and their deliveries with the attempts made.
 */
import * as z from 'zod';
import { MAX_WEBHOOK_URL_LENGTH, MAX_WEBHOOKS_PER_COMPANY } from '../../core/webhooks/model.js';
import { companyId, ListQuery, NoQuery, pathId } from '../parameters.js';
import { defineRoute, type FunctionAccess, type RouteResponse } from '../route.js';
import { ConflictProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';
import {
  Webhook,
  WebhookCreateBody,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookPage,
  WebhookUpdateBody,
  WebhookWithSecret,
} from '../schemas/webhooks.js';

const webhookId = pathId('webhookId', 'A webhook of the company (its ULID).');
const deliveryId = pathId('deliveryId', 'A delivery of the webhook (its ULID).');
const CompanyParams = z.object({ companyId });
const WebhookParams = z.object({ companyId, webhookId });
const DeliveryParams = z.object({ companyId, webhookId, deliveryId });

const WEBHOOKS_PATH = '/companies/{companyId}/webhooks';
const WEBHOOK_PATH = `${WEBHOOKS_PATH}/{webhookId}`;
const DELIVERY_PATH = `${WEBHOOK_PATH}/deliveries/{deliveryId}`;
const ENTRY = 'functions/handlers/webhooks.ts';
// The ten routes share one function: webhooks and deliveries are items of the one webhooks table; each change of a
// webhook writes its audit entry in the same transaction.
const ACCESS: FunctionAccess = { storage: true, pagesListings: true, webhookSettings: true, tables: { webhooks: 'RW', audit: 'W' } };
const TAGS = ['Webhooks'];
const READ = 'Needs `webhooks:read` on the company (operators and administrators).';
const WRITE = 'Needs `webhooks:write` on the company (company and platform administrators).';
const webhookNotFound = problem('NotFound', 'Not Found: the company has no such webhook.');
const deliveryNotFound = problem('NotFound', 'Not Found: the company has no such webhook, or the webhook no such delivery.');
const URL_RULES = `The URL must be absolute, at most ${MAX_WEBHOOK_URL_LENGTH} characters, \`https\` (\`http\` only for a host \`WEBHOOK_ALLOWED_HTTP_HOSTS\` names), without user name, password or fragment; an IP address in a private, loopback, link-local, carrier-grade NAT or metadata range is refused at once, and a host name at every delivery, against each address it resolves to then.`;
const badBody = (what: string): RouteResponse =>
  problem('BadRequest', `Bad Request: ${what}; \`errors\` names each member (\`/url\` with why the URL is refused). Nothing was changed.`);
const conflict = (description: string): RouteResponse => ({ description, schema: ConflictProblem });
const JSON_BODY = { 415: PROBLEM_RESPONSES.UnsupportedMediaType };

/** POST /companies/{companyId}/webhooks */
export const webhookCreate = defineRoute({
  id: 'WebhookCreate',
  api: 'main',
  method: 'POST',
  path: WEBHOOKS_PATH,
  summary: 'Create a webhook',
  description: `Subscribes a URL to event types of the company: each event is POSTed to it as the Standard Webhooks specification says, signed with the webhook's secret, which this answer shows once (\`secret\`). ${URL_RULES} A company has at most ${MAX_WEBHOOKS_PER_COMPANY} webhooks. ${WRITE}`,
  tags: TAGS,
  scope: 'webhooks:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: NoQuery,
    body: { kind: 'json', schema: WebhookCreateBody, invalidDetail: 'The webhook is invalid; nothing was created.' },
  },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    ...JSON_BODY,
    201: {
      description: 'Created: the webhook and its secret (shown only here).',
      schema: WebhookWithSecret,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the webhook.' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: badBody('a URL refused, events empty, unknown or repeated, a description too long, or an unknown member'),
    409: conflict(
      `Conflict: the company already has ${MAX_WEBHOOKS_PER_COMPANY} webhooks; delete one, or subscribe an existing one to more events. Nothing was created.`,
    ),
  },
});

/** GET /companies/{companyId}/webhooks */
export const webhooksList = defineRoute({
  id: 'WebhooksList',
  api: 'main',
  method: 'GET',
  path: WEBHOOKS_PATH,
  summary: 'List the webhooks of a company',
  description: `The company's webhooks, oldest first, without their secrets. ${READ}`,
  tags: TAGS,
  scope: 'webhooks:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: ListQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: { 200: { description: 'A page of webhooks, oldest first.', schema: WebhookPage }, ...AUTHENTICATED_PROBLEMS },
});

/** GET /companies/{companyId}/webhooks/{webhookId} */
export const webhookGet = defineRoute({
  id: 'WebhookGet',
  api: 'main',
  method: 'GET',
  path: WEBHOOK_PATH,
  summary: 'Get a webhook',
  description: `The webhook, without its secret. ${READ}`,
  tags: TAGS,
  scope: 'webhooks:read',
  companyParameter: 'companyId',
  request: { params: WebhookParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: { 200: { description: 'The webhook.', schema: Webhook }, ...AUTHENTICATED_PROBLEMS, 404: webhookNotFound },
});

/** PATCH /companies/{companyId}/webhooks/{webhookId} */
export const webhookUpdate = defineRoute({
  id: 'WebhookUpdate',
  api: 'main',
  method: 'PATCH',
  path: WEBHOOK_PATH,
  summary: 'Change a webhook',
  description: `Replaces the members sent: \`url\`, \`events\`, \`description\` (null clears it), \`enabled\` (false stops deliveries; true resumes them and restarts the failure clock of a webhook the service disabled). ${URL_RULES} ${WRITE}`,
  tags: TAGS,
  scope: 'webhooks:write',
  companyParameter: 'companyId',
  request: {
    params: WebhookParams,
    query: NoQuery,
    body: { kind: 'json', schema: WebhookUpdateBody, invalidDetail: 'The webhook changes are invalid; nothing was changed.' },
  },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    ...JSON_BODY,
    200: { description: 'The webhook after the change.', schema: Webhook },
    ...AUTHENTICATED_PROBLEMS,
    400: badBody('an empty body, a URL refused, events empty, unknown or repeated, a description too long, or an unknown member'),
    404: webhookNotFound,
    409: conflict('Conflict: other changes to the webhook kept landing meanwhile; nothing was changed. Read it and send the change again.'),
  },
});

/** DELETE /companies/{companyId}/webhooks/{webhookId} */
export const webhookDelete = defineRoute({
  id: 'WebhookDelete',
  api: 'main',
  method: 'DELETE',
  path: WEBHOOK_PATH,
  summary: 'Delete a webhook',
  description: `Nothing more is delivered to the webhook, retries included; its deliveries are no longer listed. ${WRITE}`,
  tags: TAGS,
  scope: 'webhooks:write',
  companyParameter: 'companyId',
  request: { params: WebhookParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: { 204: { description: 'The webhook is deleted.' }, ...AUTHENTICATED_PROBLEMS, 404: webhookNotFound },
});

/** POST /companies/{companyId}/webhooks/{webhookId}/secret */
export const webhookSecretRotate = defineRoute({
  id: 'WebhookSecretRotate',
  api: 'main',
  method: 'POST',
  path: `${WEBHOOK_PATH}/secret`,
  summary: "Rotate a webhook's secret",
  description: `Draws a new signing secret, shown once in this answer. For 24 hours (\`previousSecretExpiresAt\`) every delivery is signed with both, the new one and the one it replaces (two signatures in \`webhook-signature\`), so that the receiver can switch without losing a delivery. ${WRITE}`,
  tags: TAGS,
  scope: 'webhooks:write',
  companyParameter: 'companyId',
  request: { params: WebhookParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'The webhook and its new secret (shown only here).', schema: WebhookWithSecret },
    ...AUTHENTICATED_PROBLEMS,
    404: webhookNotFound,
    409: conflict('Conflict: other changes to the webhook kept landing meanwhile; no secret was drawn. Send it again.'),
  },
});

/** POST /companies/{companyId}/webhooks/{webhookId}/test */
export const webhookTest = defineRoute({
  id: 'WebhookTest',
  api: 'main',
  method: 'POST',
  path: `${WEBHOOK_PATH}/test`,
  summary: 'Send a test event to a webhook',
  description: `Queues a \`webhook.test\` event for the webhook (enabled or not), delivered and retried like any other; follow it in the webhook's deliveries. ${WRITE}`,
  tags: TAGS,
  scope: 'webhooks:write',
  companyParameter: 'companyId',
  request: { params: WebhookParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    202: {
      description: 'Accepted: the delivery, PENDING, its first attempt due now.',
      schema: WebhookDelivery,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the delivery.' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    404: webhookNotFound,
  },
});

/** GET /companies/{companyId}/webhooks/{webhookId}/deliveries */
export const webhookDeliveriesList = defineRoute({
  id: 'WebhookDeliveriesList',
  api: 'main',
  method: 'GET',
  path: `${WEBHOOK_PATH}/deliveries`,
  summary: 'List the deliveries of a webhook',
  description: `The webhook's deliveries, newest first, each with its state, attempts and their statuses. Final deliveries are kept 30 days. ${READ}`,
  tags: TAGS,
  scope: 'webhooks:read',
  companyParameter: 'companyId',
  request: { params: WebhookParams, query: ListQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'A page of deliveries, newest first.', schema: WebhookDeliveryPage },
    ...AUTHENTICATED_PROBLEMS,
    404: webhookNotFound,
  },
});

/** GET /companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId} */
export const webhookDeliveryGet = defineRoute({
  id: 'WebhookDeliveryGet',
  api: 'main',
  method: 'GET',
  path: DELIVERY_PATH,
  summary: 'Get a delivery of a webhook',
  description: `One delivery, with its state and attempts. ${READ}`,
  tags: TAGS,
  scope: 'webhooks:read',
  companyParameter: 'companyId',
  request: { params: DeliveryParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: { 200: { description: 'The delivery.', schema: WebhookDelivery }, ...AUTHENTICATED_PROBLEMS, 404: deliveryNotFound },
});

/** POST /companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver */
export const webhookDeliveryRedeliver = defineRoute({
  id: 'WebhookDeliveryRedeliver',
  api: 'main',
  method: 'POST',
  path: `${DELIVERY_PATH}/redeliver`,
  summary: 'Send a delivery again',
  description: `Makes the delivery PENDING with an attempt due now: the same \`webhook-id\` and body, its earlier attempts kept. ${WRITE}`,
  tags: TAGS,
  scope: 'webhooks:write',
  companyParameter: 'companyId',
  request: { params: DeliveryParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    202: { description: 'Accepted: the delivery, PENDING again.', schema: WebhookDelivery },
    ...AUTHENTICATED_PROBLEMS,
    404: deliveryNotFound,
  },
});

/** Every webhooks route, in the order of ROUTES. */
export const WEBHOOK_ROUTES = [
  webhookCreate,
  webhooksList,
  webhookGet,
  webhookUpdate,
  webhookDelete,
  webhookSecretRotate,
  webhookTest,
  webhookDeliveriesList,
  webhookDeliveryGet,
  webhookDeliveryRedeliver,
] as const;
