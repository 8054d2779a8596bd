/** The ports of webhooks: where webhooks and their deliveries are kept, and how a delivery is sent. */
import type { AuditEntry } from '../audit/ports.js';
import type { ListParameters, Page } from '../shared/paging.js';
import type { DeliveryAttempt, StoredDelivery, StoredWebhook, WebhookEventType } from './model.js';

/** A company's webhooks (functions/adapters/aws/dynamodb-webhook-store.ts). */
export interface WebhookStore {
  /**
   * Writes a new webhook, unless the company already has `limit` webhooks, with `audit` (when given) in the same
   * write: both or neither.
   * @returns false when the company is at its limit (nothing written)
   */
  create(webhook: StoredWebhook, limit: number, audit?: AuditEntry): Promise<boolean>;
  get(company: string, webhookId: string): Promise<StoredWebhook | undefined>;
  /** The company's webhooks, oldest first. */
  list(company: string, parameters: ListParameters): Promise<Page<StoredWebhook>>;
  /**
   * Replaces the stored webhook with `webhook` if it still exists and its `updated` is `expectedUpdated` (a
   * compare-and-set: two changes never lose one another), with `audit` (when given) in the same write.
   * @returns false when it is gone or changed meanwhile (nothing written)
   */
  replace(webhook: StoredWebhook, expectedUpdated: string, audit?: AuditEntry): Promise<boolean>;
  /**
   * Deletes the webhook (its deliveries stay, readable by nobody, until their TTL), with `audit` (when given) in the
   * same write; with `expectedUpdated`, only while its `updated` is that. @returns false when absent (or changed).
   */
  delete(company: string, webhookId: string, audit?: AuditEntry, expectedUpdated?: string): Promise<boolean>;
  /** The company's enabled webhooks subscribed to `type`. */
  subscribed(company: string, type: WebhookEventType): Promise<StoredWebhook[]>;
}

/** Deliveries of events to webhooks (the same table as the webhooks). */
export interface DeliveryStore {
  /**
   * Writes each delivery unless one with its id already exists (a replayed event): idempotent.
   * @returns the deliveries written now (those not already there)
   */
  createEach(deliveries: readonly StoredDelivery[]): Promise<StoredDelivery[]>;
  get(company: string, webhookId: string, deliveryId: string): Promise<StoredDelivery | undefined>;
  /** A webhook's deliveries, newest first. */
  list(company: string, webhookId: string, parameters: ListParameters): Promise<Page<StoredDelivery>>;
  /** PENDING deliveries whose nextAttemptAt is at or before `now` (ISO-8601), oldest due first, at most `limit`. */
  due(now: string, limit: number): Promise<StoredDelivery[]>;
  /**
   * Takes the next attempt of `delivery`: moves its nextAttemptAt to `leaseUntil` (ISO-8601) if its `attempts` and
   * `nextAttemptAt` are still the ones read, so that two senders (the stream consumer and the sweeper) never make the
   * same attempt; a sender that dies mid-attempt leaves it due again at `leaseUntil`.
   * @returns false when another sender took it, or it changed (nothing written)
   */
  claim(delivery: StoredDelivery, leaseUntil: string): Promise<boolean>;
  /**
   * Records an attempt taken with claim: `attempts` + 1, the attempt appended to `history`, `lastStatus`, and the new
   * state and nextAttemptAt (null once final), if `attempts` is still the one read.
   * @returns false when the delivery changed meanwhile
   */
  recordAttempt(
    delivery: StoredDelivery,
    attempt: DeliveryAttempt,
    next: { state: StoredDelivery['state']; nextAttemptAt: string | null },
  ): Promise<boolean>;
  /**
   * Makes a delivery PENDING again with a first attempt due at `now` (ISO-8601), keeping its messageId and history:
   * a redelivery. @returns false when absent.
   */
  redeliver(company: string, webhookId: string, deliveryId: string, now: string): Promise<boolean>;
}

/** What became of one HTTP attempt. */
export type SendOutcome =
  /** The receiver answered (2xx: delivered). */
  | { kind: 'answered'; status: number; durationMs: number }
  /** No connection was opened: the URL or an address it resolves to is not allowed (says which and why). */
  | { kind: 'refused'; reason: string }
  /** A connection was tried and failed, or no answer came within the timeout. */
  | { kind: 'failed'; reason: string; durationMs: number };

/** Sends one delivery over HTTP (functions/adapters/webhook-sender.ts). */
export interface WebhookSender {
  /**
   * POSTs `body` (JSON) to `url` with `headers`, following no redirect, giving up after `timeoutMs`; resolves the
   * host itself and refuses private, loopback, link-local, carrier-grade NAT and metadata addresses unless allowed.
   * Never throws: every failure is an outcome.
   */
  send(url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number): Promise<SendOutcome>;
}
