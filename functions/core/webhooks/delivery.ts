/**
 * One attempt of a delivery (docs/webhooks.md, "Delivery"): claimed so that no two senders make it, signed with the
 * webhook's current secrets, sent, recorded with the next attempt's time or the final state; and the webhook's
 * health kept (failingSince, disabled after failing DISABLE_AFTER_FAILING_MS). Called by the webhooks table's stream
 * consumer for new and redelivered deliveries and by the retry sweeper for due ones: both may see the same delivery,
 * the claim decides.
 */
import type { AuditEntry } from '../audit/ports.js';
import { derivedId } from '../rollouts/derived-ids.js';
import { DELIVERY_TIMEOUT_MS, type DeliveryAttempt, DISABLE_AFTER_FAILING_MS, type StoredDelivery, type StoredWebhook } from './model.js';
import type { DeliveryStore, SendOutcome, WebhookSender, WebhookStore } from './ports.js';
import { retryDelayMs } from './schedule.js';
import { signedHeaders } from './signing.js';

/** What attempting a delivery needs: `webhooks` writes the audit entry given with a change in the same write. */
export interface DeliveryPorts {
  webhooks: WebhookStore;
  deliveries: DeliveryStore;
  sender: WebhookSender;
}

/** How attempts are made: the clock, the jitter's randomness, the retry schedule's scale and the timeout. */
export interface DeliveryOptions {
  now: () => Date;
  /** [0, 1): Math.random, or a stub in tests. */
  random: () => number;
  /** Multiplies every retry wait: 1 in production (WEBHOOK_RETRY_SCALE shortens it locally for tests). */
  retryScale: number;
  /** The receiver's answer must come within this, ms (DELIVERY_TIMEOUT_MS). */
  timeoutMs: number;
}

/** The production options: the real clock and randomness, the full schedule, DELIVERY_TIMEOUT_MS. */
export const DEFAULT_DELIVERY_OPTIONS: DeliveryOptions = {
  now: () => new Date(),
  random: Math.random,
  retryScale: 1,
  timeoutMs: DELIVERY_TIMEOUT_MS,
};

/**
 * How long a claim holds a delivery beyond the timeout, ms: a sender that dies mid-attempt leaves the delivery due
 * again this long after the timeout, long enough that a live sender always records its attempt first.
 */
export const LEASE_MARGIN_MS = 60_000;

/** What became of attemptDelivery's call. */
export type AttemptResult =
  /** Not PENDING, or not due yet: nothing done. */
  | 'not-due'
  /** Another sender claimed it first, or it changed meanwhile (a redelivery): nothing sent by this call. */
  | 'taken'
  /** Sent, and the receiver answered 2xx: SUCCEEDED. */
  | 'succeeded'
  /** Sent (or refused) without a 2xx: PENDING with a next attempt. */
  | 'retrying'
  /** Its last attempt failed, or its webhook is deleted or disabled: FAILED. */
  | 'failed';

/** Whether `delivery` is PENDING and its next attempt is due at `now`. */
export function isDue(delivery: Pick<StoredDelivery, 'state' | 'nextAttemptAt'>, now: Date): boolean {
  return delivery.state === 'PENDING' && delivery.nextAttemptAt !== null && Date.parse(delivery.nextAttemptAt) <= now.getTime();
}

/** The attempt an outcome is, for the delivery's history. */
function attemptOf(outcome: SendOutcome, at: Date): DeliveryAttempt {
  const base = { at: at.toISOString() };
  switch (outcome.kind) {
    case 'answered': {
      const ok = outcome.status >= 200 && outcome.status < 300;
      const redirect = outcome.status >= 300 && outcome.status < 400 ? ' (redirects are not followed)' : '';
      const error = ok ? null : `the receiver answered ${outcome.status}${redirect}`;
      return { ...base, status: outcome.status, error, durationMs: outcome.durationMs };
    }
    case 'refused':
      return { ...base, status: null, error: outcome.reason, durationMs: null };
    default:
      return { ...base, status: null, error: outcome.reason, durationMs: outcome.durationMs };
  }
}

/**
 * Makes the next attempt of `delivery` if it is due: claims it (a lease of the timeout plus LEASE_MARGIN_MS), reads
 * its webhook (a deleted one makes it FAILED without sending, and so does a disabled one, but for a `webhook.test`
 * delivery: a test checks an endpoint before it is enabled again), sends it signed with the webhook's current
 * secrets, records the attempt (SUCCEEDED on a 2xx; else PENDING again after the schedule's next wait, or FAILED
 * after the last) and updates the webhook's health (keepHealth).
 * @throws what the stores throw (the caller's batch is retried; the claim's lease makes the delivery due again)
 */
export async function attemptDelivery(
  ports: DeliveryPorts,
  delivery: StoredDelivery,
  options: DeliveryOptions = DEFAULT_DELIVERY_OPTIONS,
): Promise<AttemptResult> {
  const start = options.now();
  if (!isDue(delivery, start)) return 'not-due';
  const leaseUntil = new Date(start.getTime() + options.timeoutMs + LEASE_MARGIN_MS).toISOString();
  if (!(await ports.deliveries.claim(delivery, leaseUntil))) return 'taken';
  const webhook = await ports.webhooks.get(delivery.company, delivery.webhookId);
  if (webhook === undefined || !(webhook.enabled || delivery.type === 'webhook.test')) {
    const error = `not sent: the webhook is ${webhook === undefined ? 'deleted' : 'disabled'}`;
    const attempt: DeliveryAttempt = { at: start.toISOString(), status: null, error, durationMs: null };
    const recorded = await ports.deliveries.recordAttempt(delivery, attempt, { state: 'FAILED', nextAttemptAt: null });
    return recorded ? 'failed' : 'taken';
  }
  const headers = {
    'content-type': 'application/json',
    ...signedHeaders(webhook, delivery.messageId, delivery.payload, start),
  };
  const outcome = await ports.sender.send(webhook.url, headers, delivery.payload, options.timeoutMs);
  const attempt = attemptOf(outcome, start);
  const succeeded = attempt.status !== null && attempt.error === null;
  const end = options.now();
  const delay = succeeded ? undefined : retryDelayMs(delivery.attempts + 1, options.random, options.retryScale);
  const next: { state: StoredDelivery['state']; nextAttemptAt: string | null } = succeeded
    ? { state: 'SUCCEEDED', nextAttemptAt: null }
    : delay === undefined
      ? { state: 'FAILED', nextAttemptAt: null }
      : { state: 'PENDING', nextAttemptAt: new Date(end.getTime() + delay).toISOString() };
  if (!(await ports.deliveries.recordAttempt(delivery, attempt, next))) return 'taken';
  await keepHealth(ports, webhook, succeeded, end);
  return succeeded ? 'succeeded' : next.state === 'FAILED' ? 'failed' : 'retrying';
}

/**
 * Keeps a webhook's health after an attempt at `now`: a success clears `failingSince`, a failure sets it when it was
 * null, and a failure when it has been failing DISABLE_AFTER_FAILING_MS disables it (enabled=false, `updated` now)
 * with its `webhook.disabled` audit entry in the same write. Writes only on a change, as a compare-and-set on `updated`: when a
 * person changed the webhook meanwhile (or a concurrent attempt did the same), nothing is written; the next attempt
 * sees the webhook as it is.
 */
export async function keepHealth(
  ports: Pick<DeliveryPorts, 'webhooks'>,
  webhook: StoredWebhook,
  succeeded: boolean,
  now: Date,
): Promise<void> {
  const at = now.toISOString();
  if (succeeded) {
    if (webhook.failingSince !== null) await ports.webhooks.replace({ ...webhook, failingSince: null, updated: at }, webhook.updated);
    return;
  }
  if (webhook.failingSince === null) {
    await ports.webhooks.replace({ ...webhook, failingSince: at, updated: at }, webhook.updated);
    return;
  }
  if (!webhook.enabled || now.getTime() - Date.parse(webhook.failingSince) < DISABLE_AFTER_FAILING_MS) return;
  await ports.webhooks.replace({ ...webhook, enabled: false, updated: at }, webhook.updated, disabledEntry(webhook, now));
}

/** The actor of the entries the delivery engine records. */
export const DELIVERY_ACTOR = 'webhook-deliveries';

/**
 * The audit entry of a webhook disabled at `now` after failing since its `failingSince`, written with the change
 * (recorded once: only the compare-and-set that disabled the webhook writes it). Its id is derived from the webhook
 * and `now`.
 */
export function disabledEntry(webhook: StoredWebhook, now: Date): AuditEntry {
  const failingSince = webhook.failingSince ?? now.toISOString();
  return {
    id: derivedId(now.toISOString(), `${webhook.company}#${webhook.id}:disabled:${failingSince}`),
    at: now.toISOString(),
    actor: DELIVERY_ACTOR,
    action: 'webhook.disabled',
    target: { kind: 'webhook', id: webhook.id },
    companies: [webhook.company],
    before: { enabled: true, failingSince },
    after: { enabled: false, url: webhook.url },
  };
}
