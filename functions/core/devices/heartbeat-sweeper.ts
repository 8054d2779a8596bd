/**
 * The heartbeat sweeper: devices silent for longer than their heartbeat window become DISCONNECTED. Run every
 * minute (a schedule on AWS, a timer locally); the overdue devices are found by index queries on their deadline.
 */
import type { DisconnectOutcome, OverduePresence, PresenceRepository } from './ports.js';

/** What sweepHeartbeats needs. */
export interface HeartbeatSweepDependencies {
  presence: Pick<PresenceRepository, 'overdue' | 'disconnect'>;
  /** Current time; injectable for tests. */
  now?: () => Date;
  /** Entries read per index query round. @default 100 */
  batchSize?: number;
  /** Most entries handled per run; the next run goes on. @default 10_000 */
  maxPerRun?: number;
  /** Transactions in flight at once. @default 8 */
  concurrency?: number;
}

/** What one sweep did, by outcome: `company/deviceId` of each entry handled. */
export type HeartbeatSweepResult = Record<DisconnectOutcome, string[]>;

/**
 * Disconnects every device whose presence deadline (`sweepAt` = its last report + the heartbeat window) has passed.
 * Each overdue entry is one transaction (PresenceRepository.disconnect): the entry leaves the sweep index only if
 * its deadline is still the one read (a report in between moved it: that report wins, nothing changes), and the
 * device becomes DISCONNECTED, `disconnectedSince` = that deadline (the instant the device became overdue, not the
 * time this run happens to look: the same value whichever run, or retry, writes it), `updated` = now, only if it is
 * CONNECTED. A device gone or no longer CONNECTED only loses its deadline.
 *
 * Bounded: rounds of `batchSize` entries until a round comes back short, makes no progress (the index lags behind
 * entries already handled) or `maxPerRun` entries were handled; the rest waits for the next run.
 *
 * Idempotent and crash-safe: the only state is the entry's deadline, and each step is one atomic, conditional
 * transaction. A crash before a transaction leaves the entry overdue, so the next run does it; a crash after it has
 * nothing left to do (the entry left the index with the device's change, together); running a transaction twice
 * finds no deadline the second time and changes nothing. A report racing the sweep either lands first (the deadline
 * differs: superseded) or after (it finds its presence entry without a deadline and writes the device CONNECTED
 * again, see reportDeviceHealth).
 * @throws Error on backend failures (the next run retries).
 */
export async function sweepHeartbeats(dependencies: HeartbeatSweepDependencies): Promise<HeartbeatSweepResult> {
  const now = dependencies.now?.() ?? new Date();
  const nowIso = now.toISOString();
  const batchSize = dependencies.batchSize ?? 100;
  const maxPerRun = dependencies.maxPerRun ?? 10_000;
  const concurrency = Math.max(1, dependencies.concurrency ?? 8);
  const result: HeartbeatSweepResult = { disconnected: [], released: [], superseded: [] };
  let handled = 0;
  while (handled < maxPerRun) {
    const batch = await dependencies.presence.overdue(nowIso, Math.min(batchSize, maxPerRun - handled));
    let progress = 0;
    for (let start = 0; start < batch.length; start += concurrency) {
      const slice = batch.slice(start, start + concurrency);
      const outcomes = await Promise.all(slice.map((entry) => dependencies.presence.disconnect(entry, entry.sweepAt, nowIso)));
      outcomes.forEach((outcome, index) => {
        result[outcome].push(nameOf(slice[index] as OverduePresence));
        if (outcome !== 'superseded') progress += 1;
      });
    }
    handled += batch.length;
    if (batch.length < batchSize || progress === 0) break;
  }
  return result;
}

function nameOf(entry: OverduePresence): string {
  return `${entry.company}/${entry.deviceId}`;
}
