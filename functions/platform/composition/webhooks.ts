/**
 * The webhooks side of the composition root: the webhooks and their deliveries over the webhooks table (on the
 * storage module's document client and cursor codec), and the webhook settings.
 */
import { DynamoDbDeliveryStore } from '../../adapters/aws/dynamodb-delivery-store.js';
import { DynamoDbWebhookStore } from '../../adapters/aws/dynamodb-webhook-store.js';
import { ENV, readEnvironment } from '../../contract/environment.js';
import type { DeliveryStore, WebhookStore } from '../../core/webhooks/ports.js';
import { auditConfig, type WebhookConfig, webhookConfig } from '../config.js';
import { storage } from './storage.js';

/** The webhooks table's name (WEBHOOKS_TABLE, of the storage variables). */
function webhooksTable(): string {
  return readEnvironment('storage', process.env)[ENV.webhooksTable];
}

let webhooks: WebhookStore | undefined;
let audited: WebhookStore | undefined;
let deliveries: DeliveryStore | undefined;
let settings: WebhookConfig | undefined;

/**
 * The company's webhooks (built once, on storage()'s client).
 * @throws EnvironmentError naming every missing or malformed storage variable (WEBHOOKS_TABLE among them).
 */
export function webhookStore(): WebhookStore {
  if (webhooks === undefined) {
    const { dynamoDb, cursors } = storage();
    webhooks = new DynamoDbWebhookStore(dynamoDb, webhooksTable(), cursors);
  }
  return webhooks;
}

/**
 * The company's webhooks for their administration (built once, on storage()'s client): each change is written with
 * its audit entry on AUDIT_TABLE.
 * @throws EnvironmentError naming every missing or malformed storage variable, or AUDIT_TABLE.
 */
export function auditedWebhookStore(): WebhookStore {
  if (audited === undefined) {
    const { dynamoDb, cursors } = storage();
    audited = new DynamoDbWebhookStore(dynamoDb, webhooksTable(), cursors, auditConfig().tableName);
  }
  return audited;
}

/**
 * The webhooks' deliveries (built once, on storage()'s client).
 * @throws EnvironmentError naming every missing or malformed storage variable (WEBHOOKS_TABLE among them).
 */
export function deliveryStore(): DeliveryStore {
  if (deliveries === undefined) {
    const { dynamoDb, cursors } = storage();
    deliveries = new DynamoDbDeliveryStore(dynamoDb, webhooksTable(), cursors);
  }
  return deliveries;
}

/** The webhook settings, read once. @throws EnvironmentError naming WEBHOOK_ALLOWED_HTTP_HOSTS when malformed. */
export function webhookSettings(): WebhookConfig {
  settings ??= webhookConfig();
  return settings;
}
