/**
 * The functions that deliver webhooks (docs/webhooks.md, "Delivery"), listed in FUNCTIONS (functions.ts): the fan-out
 * of bus events to deliveries, the first attempts from the webhooks table's stream, and the retry sweeper.
 */
import { WEBHOOK_SOURCE_EVENT_TYPES } from '../core/webhooks/events.js';
import { defineFunction } from './function.js';

/**
 * The webhook fan-out: the service's own bus events that webhooks carry (WEBHOOK_SOURCE_EVENT_TYPES), through an
 * EventBridge rule and an SQS queue on AWS (a follower of the local bus's file locally), each written as one PENDING
 * delivery per subscribed webhook (a Query of the company's webhooks, then one conditional Put per delivery: a
 * redelivered message writes nothing twice). It sends nothing: the webhooks table's stream does (WebhookDeliveries).
 */
export const webhookFanout = defineFunction({
  id: 'WebhookFanout',
  label: 'Webhook fan-out',
  entry: 'functions/handlers/webhook-fanout.ts',
  trigger: {
    kind: 'busEvents',
    detailTypes: WEBHOOK_SOURCE_EVENT_TYPES,
    queue: 'WebhookEvents',
    queueLabel: 'Webhook events queue',
    batchSize: 10,
    maxConcurrency: 2,
    maxReceiveCount: 5,
    retentionDays: 4,
  },
  access: { storage: true, tables: { webhooks: 'RW' }, timeoutSeconds: 60, memorySize: 256 },
});

/**
 * Webhook deliveries: the webhooks table's stream, its delivery items only (`DELIVERY#` partitions), gives every
 * delivery that is PENDING and due (a new one, a redelivery) its attempt at once, 16 at a time: the first attempt
 * within about a second of the event. Each attempt is claimed (a conditional update), so the retry sweeper never
 * makes it too. Sending fails no batch (a failed attempt is recorded and retried by schedule); a store's failure does,
 * and the batch is retried until nearly a day old. Its timeout: a batch of 50 is at most 4 rounds of 10-second attempts.
 */
export const webhookDeliveries = defineFunction({
  id: 'WebhookDeliveries',
  label: 'Webhook deliveries',
  entry: 'functions/handlers/webhook-deliveries.ts',
  trigger: {
    kind: 'tableStream',
    tables: ['webhooks'],
    batchSize: 50,
    retryAttempts: -1,
    maxRecordAgeHours: 23,
    partitionKeyPrefix: 'DELIVERY#',
  },
  access: { storage: true, tables: { webhooks: 'RW', audit: 'W' }, webhookSettings: true, timeoutSeconds: 120, memorySize: 512 },
});

/**
 * The webhook retry sweeper: queries the webhooks table's sparse `due` index for deliveries whose next attempt has
 * come (retries by the schedule, and attempts whose sender died past their lease) and attempts them, 16 at a time,
 * for at most WEBHOOK_SWEEP_BUDGET_MS of each run. Run by a timer locally (WEBHOOK_SWEEP_INTERVAL_MS).
 */
export const webhookRetrySweeper = defineFunction({
  id: 'WebhookRetrySweeper',
  label: 'Webhook retry sweeper',
  entry: 'functions/handlers/webhook-retry-sweeper.ts',
  trigger: {
    kind: 'schedule',
    everyMinutes: 1,
    via: 'scheduler',
    description: 'Attempts the webhook deliveries whose next attempt is due.',
  },
  access: { storage: true, tables: { webhooks: 'RW', audit: 'W' }, webhookSettings: true, timeoutSeconds: 50, memorySize: 512 },
});
