/**
 * The audit log of administrative changes (docs/contract.md, "Audit"): who changed what, when, with the values before
 * and after (never a password). Listed at `GET /admin/audit`, and each entry emitted on the event bus.
 */
import type { Page } from '../shared/paging.js';

/** What an entry may record, as the contract lists them. */
export const AUDIT_ACTIONS = [
  'company.created',
  'company.updated',
  'user.invited',
  'user.updated',
  'user.deleted',
  'user.password-reset',
  'webhook.created',
  'webhook.updated',
  'webhook.secret-rotated',
  'webhook.deleted',
  'webhook.disabled',
  'api-client.created',
  'api-client.updated',
  'api-client.secret-rotated',
  'api-client.deleted',
] as const;

/** What an entry records. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** One administrative change. */
export interface AuditEntry {
  /** ULID: unique, and sorts by time. */
  id: string;
  /** ISO-8601. */
  at: string;
  /** The username of who made the change (the token's `username`, or `sub` when it has none). */
  actor: string;
  action: AuditAction;
  /** What was changed: a company id, a username, a webhook id, or an API client id. */
  target: { kind: 'company' | 'user' | 'webhook' | 'api-client'; id: string };
  /** Companies the change concerns (a company's own id; a user's companies before and after): a company admin sees these. */
  companies: string[];
  /** The target's values before the change (absent for a creation); never a password. */
  before?: Record<string, unknown>;
  /** The target's values after the change (absent for a deletion); never a password. */
  after?: Record<string, unknown>;
}

/** Which entries a listing reads. */
export interface AuditFilter {
  /** Only entries concerning this company. */
  company?: string;
  /** Only entries by this actor. */
  actor?: string;
}

/** Where audit entries are kept (the audit table). */
export interface AuditLog {
  /** Keeps the entry; writing the same `id` again changes nothing (a retry). */
  record(entry: AuditEntry): Promise<void>;
  /**
   * A page of entries matching `filter`, newest first, continuing after `cursor` (a `nextCursor` of this listing).
   * @throws BadRequestError when the cursor was not issued by this listing.
   */
  list(filter: AuditFilter, limit: number, cursor: string | undefined): Promise<Page<AuditEntry>>;
}
