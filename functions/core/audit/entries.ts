/**
 * Making audit entries (docs/contract.md, "Audit"): who the actor is, and an entry's id and time. Every use case that
 * changes administrative state builds its entry here, so that entries look alike whoever records them.
 */
import { ulid } from 'ulid';
import type { Principal } from '../shared/principal.js';
import type { AuditAction, AuditEntry } from './ports.js';

/** The actor of a change: the principal's username (the token's `username` claim), else its subject (`sub`). */
export function actorOf(principal: Principal): string {
  const { username } = principal;
  return username !== undefined && username !== '' ? username : principal.subject;
}

/** What an entry records, besides its id, time and actor. */
export interface AuditChange {
  action: AuditAction;
  target: AuditEntry['target'];
  /** The companies the change concerns (duplicates are dropped). */
  companies: readonly string[];
  /** The target's values before the change (absent for a creation); never a password. */
  before?: Record<string, unknown>;
  /** The target's values after the change (absent for a deletion); never a password. */
  after?: Record<string, unknown>;
}

/** The entry of `change` made by `principal` at `now`: a new ULID of that time, `at` its ISO-8601. */
export function auditEntry(principal: Principal, change: AuditChange, now: Date = new Date()): AuditEntry {
  return {
    id: ulid(now.getTime()),
    at: now.toISOString(),
    actor: actorOf(principal),
    action: change.action,
    target: { kind: change.target.kind, id: change.target.id },
    companies: [...new Set(change.companies)],
    ...(change.before === undefined ? {} : { before: change.before }),
    ...(change.after === undefined ? {} : { after: change.after }),
  };
}
