/**
 * A company's administration of its webhooks (docs/webhooks.md, "API"): create, list, read, change, delete, and
 * rotate the signing secret. Each change is one conditional write of the webhook with its audit entry; what is
 * delivered follows from the service's events and the webhooks table's stream, never from these requests.
 */
import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { auditEntry } from '../audit/entries.js';
import type { AuditAction, AuditEntry } from '../audit/ports.js';
import { BadRequestError, ConflictError, NotFoundError } from '../shared/errors.js';
import { laterThan } from '../shared/instants.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import { webhookUrlProblem } from './addresses.js';
import { MAX_WEBHOOKS_PER_COMPANY, PREVIOUS_SECRET_OVERLAP_MS, type StoredWebhook, type Webhook, type WebhookEventType } from './model.js';
import type { WebhookStore } from './ports.js';

/** What the webhook administration use cases need. */
export interface WebhookAdminDependencies {
  webhooks: WebhookStore;
  /** The hosts a URL may use plain http with (WEBHOOK_ALLOWED_HTTP_HOSTS), lowercase. */
  allowedHttpHosts: readonly string[];
  now?: () => Date;
  /** `count` random bytes (a secret's). @default crypto.randomBytes */
  random?: (count: number) => Uint8Array;
}

/** A webhook as answered: without its company (the path names it) and its secrets. */
export type WebhookView = Omit<Webhook, 'company'>;

/** A webhook with its new secret: the answer of a create or a rotation, the only ones that show it. */
export type WebhookWithSecret = WebhookView & { secret: string };

/** A new webhook (the create route's validated body: events non-empty, known and without duplicates). */
export interface WebhookRequest {
  url: string;
  events: WebhookEventType[];
  description?: string | null;
}

/** A change of a webhook (the PATCH route's validated body): each member present is replaced. */
export interface WebhookChange {
  url?: string;
  events?: WebhookEventType[];
  description?: string | null;
  /** True re-enables a webhook (and restarts its failure clock), false stops its deliveries. */
  enabled?: boolean;
}

/** Bytes of randomness in a secret (Standard Webhooks: 24 to 64). */
const SECRET_BYTES = 32;

/** Attempts of a change that loses compare-and-set races before it gives up with a conflict. */
const CHANGE_ATTEMPTS = 3;

/** A new signing secret: `whsec_` + base64 of SECRET_BYTES random bytes (Standard Webhooks). */
export function newSecret(random: (count: number) => Uint8Array = randomBytes): string {
  return `whsec_${Buffer.from(random(SECRET_BYTES)).toString('base64')}`;
}

/** The webhook as answered. */
export function webhookView(webhook: StoredWebhook): WebhookView {
  const { company: _company, secret: _secret, previousSecret: _previous, ...view } = webhook;
  return view;
}

/**
 * Why `url` cannot be a webhook's URL (absolute, `https` unless its host is allowed, no credentials, no fragment, a
 * literal IP address public or an allowed loopback one), for a person; undefined when it can.
 */
export function urlRefusal(url: string, allowedHttpHosts: readonly string[]): string | undefined {
  // The URL parser drops surrounding spaces (and tabs and line breaks anywhere): what is stored must be what is sent.
  if (url.trim() !== url) return 'must not start or end with white space';
  const problem = webhookUrlProblem(url, allowedHttpHosts);
  if (problem !== undefined) return problem;
  if (url.includes('#')) return 'must not carry a fragment (#…): receivers never see it';
  return undefined;
}

/** @throws BadRequestError naming `/url` when the URL is refused (urlRefusal). */
function checkUrl(url: string, allowedHttpHosts: readonly string[]): void {
  const refusal = urlRefusal(url, allowedHttpHosts);
  if (refusal !== undefined) {
    throw new BadRequestError(`The webhook URL ${refusal}; nothing was changed.`, [{ path: '/url', message: refusal }]);
  }
}

/** The webhook, when the company has it. @throws NotFoundError otherwise. */
export async function existingWebhook(webhooks: Pick<WebhookStore, 'get'>, company: string, webhookId: string): Promise<StoredWebhook> {
  const webhook = await webhooks.get(company, webhookId);
  if (webhook === undefined) throw new NotFoundError(`Webhook '${webhookId}' does not exist in company '${company}'.`);
  return webhook;
}

/** What a webhook's audit entries record of it (`before` / `after`): what administration sets, never a secret. */
export function auditedValues(webhook: StoredWebhook): Record<string, unknown> {
  return {
    url: webhook.url,
    events: webhook.events,
    description: webhook.description,
    enabled: webhook.enabled,
    previousSecretExpiresAt: webhook.previousSecretExpiresAt,
  };
}

/** The audit entry of `action` on `webhook` by `principal` at `now`, with the values before and after. */
function webhookAudit(
  principal: Principal,
  action: AuditAction,
  webhook: StoredWebhook,
  now: Date,
  values: { before?: StoredWebhook; after?: StoredWebhook },
): AuditEntry {
  return auditEntry(
    principal,
    {
      action,
      target: { kind: 'webhook', id: webhook.id },
      companies: [webhook.company],
      ...(values.before === undefined ? {} : { before: auditedValues(values.before) }),
      ...(values.after === undefined ? {} : { after: auditedValues(values.after) }),
    },
    now,
  );
}

/**
 * Creates a webhook, enabled, with a new secret (returned here only).
 * @throws ForbiddenError for a company not the caller's; BadRequestError for a refused URL; ConflictError when the
 *   company already has MAX_WEBHOOKS_PER_COMPANY webhooks.
 */
export async function createWebhook(
  deps: WebhookAdminDependencies,
  principal: Principal,
  company: string,
  request: WebhookRequest,
): Promise<WebhookWithSecret> {
  authorizeCompany(principal, company);
  checkUrl(request.url, deps.allowedHttpHosts);
  const at = deps.now?.() ?? new Date();
  const now = at.toISOString();
  const webhook: StoredWebhook = {
    id: ulid(Date.parse(now)),
    company,
    url: request.url,
    events: [...request.events],
    description: request.description ?? null,
    enabled: true,
    created: now,
    updated: now,
    by: principal.username ?? principal.subject,
    failingSince: null,
    previousSecretExpiresAt: null,
    secret: newSecret(deps.random),
    previousSecret: null,
  };
  const audit = webhookAudit(principal, 'webhook.created', webhook, at, { after: webhook });
  if (!(await deps.webhooks.create(webhook, MAX_WEBHOOKS_PER_COMPANY, audit))) {
    throw new ConflictError(
      `Company '${company}' already has ${MAX_WEBHOOKS_PER_COMPANY} webhooks, the most it may have; nothing was created. Delete one it no longer needs, or subscribe an existing one to more event types (PATCH its events).`,
    );
  }
  return { ...webhookView(webhook), secret: webhook.secret };
}

/** The company's webhooks, oldest first. @throws ForbiddenError for a company not the caller's; BadRequestError for a bad cursor. */
export async function listWebhooks(
  deps: Pick<WebhookAdminDependencies, 'webhooks'>,
  principal: Principal,
  company: string,
  paging: ListParameters,
): Promise<Page<WebhookView>> {
  authorizeCompany(principal, company);
  const page = await deps.webhooks.list(company, paging);
  return { items: page.items.map(webhookView), nextCursor: page.nextCursor };
}

/** One webhook. @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook. */
export async function getWebhook(
  deps: Pick<WebhookAdminDependencies, 'webhooks'>,
  principal: Principal,
  company: string,
  webhookId: string,
): Promise<WebhookView> {
  authorizeCompany(principal, company);
  return webhookView(await existingWebhook(deps.webhooks, company, webhookId));
}

/**
 * Applies `change` to the webhook as it is now, with one compare-and-set on its `updated` that writes its `action`
 * audit entry too, read again and retried when another change won meanwhile.
 * @throws NotFoundError when it is gone; ConflictError after CHANGE_ATTEMPTS lost races.
 */
async function changeWebhook(
  deps: Pick<WebhookAdminDependencies, 'webhooks' | 'now'>,
  principal: Principal,
  target: { company: string; webhookId: string; action: AuditAction },
  change: (webhook: StoredWebhook, now: Date) => StoredWebhook,
): Promise<StoredWebhook> {
  const { company, webhookId, action } = target;
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
    const current = await existingWebhook(deps.webhooks, company, webhookId);
    const now = deps.now?.() ?? new Date();
    const next = { ...change(current, now), updated: laterThan(current.updated, now) };
    const audit = webhookAudit(principal, action, current, now, { before: current, after: next });
    if (await deps.webhooks.replace(next, current.updated, audit)) return next;
  }
  throw new ConflictError(
    `Webhook '${webhookId}' kept changing while this change was applied; nothing was changed. Read it and try again.`,
  );
}

/**
 * Changes a webhook's URL, events, description or `enabled` (re-enabling clears `failingSince`, restarting the
 * failure clock).
 * @throws ForbiddenError for a company not the caller's; BadRequestError for a refused URL; NotFoundError for an
 *   unknown webhook; ConflictError when concurrent changes keep winning.
 */
export async function updateWebhook(
  deps: WebhookAdminDependencies,
  principal: Principal,
  company: string,
  webhookId: string,
  change: WebhookChange,
): Promise<WebhookView> {
  authorizeCompany(principal, company);
  if (change.url !== undefined) checkUrl(change.url, deps.allowedHttpHosts);
  const changed = await changeWebhook(deps, principal, { company, webhookId, action: 'webhook.updated' }, (webhook) => ({
    ...webhook,
    ...(change.url === undefined ? {} : { url: change.url }),
    ...(change.events === undefined ? {} : { events: [...change.events] }),
    ...(change.description === undefined ? {} : { description: change.description }),
    ...(change.enabled === undefined ? {} : { enabled: change.enabled }),
    ...(change.enabled === true && !webhook.enabled ? { failingSince: null } : {}),
  }));
  return webhookView(changed);
}

/**
 * Rotates a webhook's secret: a new one signs from now on, and the one it replaces keeps signing beside it for
 * PREVIOUS_SECRET_OVERLAP_MS (`previousSecretExpiresAt`), so receivers can switch without losing a delivery.
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook; ConflictError when
 *   concurrent changes keep winning.
 */
export async function rotateWebhookSecret(
  deps: WebhookAdminDependencies,
  principal: Principal,
  company: string,
  webhookId: string,
): Promise<WebhookWithSecret> {
  authorizeCompany(principal, company);
  const secret = newSecret(deps.random);
  const changed = await changeWebhook(deps, principal, { company, webhookId, action: 'webhook.secret-rotated' }, (webhook, now) => ({
    ...webhook,
    secret,
    previousSecret: webhook.secret,
    previousSecretExpiresAt: new Date(now.getTime() + PREVIOUS_SECRET_OVERLAP_MS).toISOString(),
  }));
  return { ...webhookView(changed), secret };
}

/**
 * Deletes a webhook: nothing more is delivered to it (its deliveries stay until their expiry, readable by nobody),
 * with its audit entry (the webhook as read; read again when it changed meanwhile).
 * @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown webhook; ConflictError when
 *   concurrent changes keep winning.
 */
export async function deleteWebhook(
  deps: Pick<WebhookAdminDependencies, 'webhooks' | 'now'>,
  principal: Principal,
  company: string,
  webhookId: string,
): Promise<void> {
  authorizeCompany(principal, company);
  for (let attempt = 0; attempt < CHANGE_ATTEMPTS; attempt += 1) {
    const current = await existingWebhook(deps.webhooks, company, webhookId);
    const audit = webhookAudit(principal, 'webhook.deleted', current, deps.now?.() ?? new Date(), { before: current });
    if (await deps.webhooks.delete(company, webhookId, audit, current.updated)) return;
  }
  throw new ConflictError(`Webhook '${webhookId}' kept changing while it was deleted; nothing was deleted. Try again.`);
}
