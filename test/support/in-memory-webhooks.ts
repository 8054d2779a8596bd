/** In-memory WebhookStore, DeliveryStore and WebhookSender, with the ports' conditional semantics, for the delivery engine's unit tests. */
import type { DeliveryAttempt, StoredDelivery, StoredWebhook, WebhookEventType } from '../../functions/core/webhooks/model.js';
import { MAX_KEPT_ATTEMPTS } from '../../functions/core/webhooks/model.js';
import type { DeliveryStore, SendOutcome, WebhookSender, WebhookStore } from '../../functions/core/webhooks/ports.js';

const key = (company: string, id: string) => `${company}#${id}`;

export class InMemoryWebhooks implements WebhookStore {
  readonly items = new Map<string, StoredWebhook>();

  async create(webhook: StoredWebhook, limit: number): Promise<boolean> {
    if ([...this.items.values()].filter((w) => w.company === webhook.company).length >= limit) return false;
    this.items.set(key(webhook.company, webhook.id), structuredClone(webhook));
    return true;
  }
  async get(company: string, id: string) {
    const found = this.items.get(key(company, id));
    return found === undefined ? undefined : structuredClone(found);
  }
  async list(company: string) {
    return { items: [...this.items.values()].filter((w) => w.company === company), nextCursor: null };
  }
  async replace(webhook: StoredWebhook, expectedUpdated: string): Promise<boolean> {
    const current = this.items.get(key(webhook.company, webhook.id));
    if (current === undefined || current.updated !== expectedUpdated) return false;
    this.items.set(key(webhook.company, webhook.id), structuredClone(webhook));
    return true;
  }
  async delete(company: string, id: string) {
    return this.items.delete(key(company, id));
  }
  async subscribed(company: string, type: WebhookEventType) {
    return [...this.items.values()]
      .filter((w) => w.company === company && w.enabled && w.events.includes(type))
      .map((w) => structuredClone(w));
  }
}

export class InMemoryDeliveries implements DeliveryStore {
  readonly items = new Map<string, StoredDelivery>();
  /** Claims made, in order (delivery id and lease). */
  readonly claims: { id: string; leaseUntil: string }[] = [];

  async createEach(deliveries: readonly StoredDelivery[]) {
    const written: StoredDelivery[] = [];
    for (const delivery of deliveries) {
      const k = key(delivery.company, delivery.id);
      if (this.items.has(k)) continue;
      this.items.set(k, structuredClone(delivery));
      written.push(delivery);
    }
    return written;
  }
  async get(company: string, _webhookId: string, id: string) {
    const found = this.items.get(key(company, id));
    return found === undefined ? undefined : structuredClone(found);
  }
  async list(company: string, webhookId: string) {
    const items = [...this.items.values()].filter((d) => d.company === company && d.webhookId === webhookId).reverse();
    return { items, nextCursor: null };
  }
  async due(now: string, limit: number) {
    return [...this.items.values()]
      .filter((d) => d.state === 'PENDING' && d.nextAttemptAt !== null && d.nextAttemptAt <= now)
      .sort((a, b) => (a.nextAttemptAt ?? '').localeCompare(b.nextAttemptAt ?? ''))
      .slice(0, limit)
      .map((d) => structuredClone(d));
  }
  async claim(delivery: StoredDelivery, leaseUntil: string) {
    const current = this.items.get(key(delivery.company, delivery.id));
    if (current === undefined || current.attempts !== delivery.attempts || current.nextAttemptAt !== delivery.nextAttemptAt) return false;
    current.nextAttemptAt = leaseUntil;
    this.claims.push({ id: delivery.id, leaseUntil });
    return true;
  }
  async recordAttempt(
    delivery: StoredDelivery,
    attempt: DeliveryAttempt,
    next: { state: StoredDelivery['state']; nextAttemptAt: string | null },
  ) {
    const current = this.items.get(key(delivery.company, delivery.id));
    if (current === undefined || current.attempts !== delivery.attempts) return false;
    current.attempts += 1;
    current.history = [...current.history, attempt].slice(-MAX_KEPT_ATTEMPTS);
    current.lastStatus = attempt.status;
    current.state = next.state;
    current.nextAttemptAt = next.nextAttemptAt;
    return true;
  }
  async redeliver(company: string, _webhookId: string, id: string, now: string) {
    const current = this.items.get(key(company, id));
    if (current === undefined) return false;
    current.state = 'PENDING';
    current.nextAttemptAt = now;
    return true;
  }
}

/** One request a ScriptedSender received. */
export interface SentRequest {
  url: string;
  headers: Readonly<Record<string, string>>;
  body: string;
  timeoutMs: number;
}

/** A sender answering from a script (the last outcome repeats), recording each request. */
export class ScriptedSender implements WebhookSender {
  readonly sent: SentRequest[] = [];
  constructor(private readonly outcomes: SendOutcome[]) {}
  async send(url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number): Promise<SendOutcome> {
    this.sent.push({ url, headers, body, timeoutMs });
    const outcome = this.outcomes.length > 1 ? this.outcomes.shift() : this.outcomes[0];
    if (outcome === undefined) throw new Error('no outcome scripted');
    return outcome;
  }
}
