/**
 * AdministrativeChange events (docs/contract.md, "Audit"): each audit entry, once recorded, is emitted on the event
 * bus, derived from the audit table's stream so that no recorded change goes unannounced and none is announced that
 * was not recorded.
 */
import type { AuditEntry } from './ports.js';

/**
 * Emitted for each audit entry: the entry itself, typed. `id` (the entry's ULID) identifies the change: a consumer
 * that sees it twice has seen one change.
 */
export interface AdministrativeChangeEvent extends AuditEntry {
  type: 'AdministrativeChange';
}

/** Publishes AdministrativeChange events. */
export interface AdministrativeChangePublisher {
  /**
   * Publishes events in order. Publishing an event published before (the same `id`) is allowed (the stream consumer
   * retries whole batches); the local bus drops such repeats, EventBridge delivers at least once.
   * @throws when the bus refuses them (the stream consumer then retries the batch).
   */
  publish(events: readonly AdministrativeChangeEvent[]): Promise<void>;
}

/** The event of an entry. */
export function administrativeChangeOf(entry: AuditEntry): AdministrativeChangeEvent {
  return { type: 'AdministrativeChange', ...entry };
}

/**
 * Publishes the events of `entries` (the audit entries a stream batch recorded), in order.
 * @throws what the publisher throws (nothing is lost: the caller retries the batch).
 */
export async function publishAdministrativeChanges(
  ports: { events: AdministrativeChangePublisher },
  entries: readonly AuditEntry[],
): Promise<void> {
  if (entries.length > 0) await ports.events.publish(entries.map(administrativeChangeOf));
}
