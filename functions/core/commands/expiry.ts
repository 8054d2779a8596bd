/**
 * The command expiry sweeper: a command still pending (QUEUED or DELIVERED) at its `expiresAt` becomes EXPIRED. Run
 * every minute (a schedule on AWS, a timer locally); the overdue commands are found by queries of the commands
 * table's sparse `sweep` index by due time, never by a scan of the fleet.
 */
import type { CommandRepository } from './ports.js';

/** What sweepExpiredCommands needs. */
export interface CommandExpiryDependencies {
  commands: Pick<CommandRepository, 'overdue' | 'transition'>;
  now?: () => Date;
  /** Commands read per index round. @default 100 */
  batchSize?: number;
  /** Most commands handled per run; the next run goes on. @default 10_000 */
  maxPerRun?: number;
}

/**
 * Expires every pending command whose `expiresAt` has passed: one conditional update each (only while pending and
 * past its expiry: a result reported first wins). Idempotent: a command expired twice changes once.
 * @returns how many commands became EXPIRED.
 * @throws Error on backend failures (the next run retries).
 */
export async function sweepExpiredCommands(deps: CommandExpiryDependencies): Promise<number> {
  const now = (deps.now?.() ?? new Date()).toISOString();
  const batchSize = deps.batchSize ?? 100;
  const maxPerRun = deps.maxPerRun ?? 10_000;
  let expired = 0;
  let handled = 0;
  while (handled < maxPerRun) {
    const batch = await deps.commands.overdue(now, Math.min(batchSize, maxPerRun - handled));
    const outcomes = await Promise.all(
      batch.map((entry) =>
        deps.commands.transition(entry.company, entry.deviceId, entry.commandId, {
          from: ['QUEUED', 'DELIVERED'],
          to: 'EXPIRED',
          at: now,
          expiredAt: now,
        }),
      ),
    );
    const changed = outcomes.filter((outcome) => outcome.outcome === 'changed').length;
    expired += changed;
    handled += batch.length;
    // The index lags behind the table: a round that changed nothing is one the index has not caught up with.
    if (batch.length < batchSize || changed === 0) break;
  }
  return expired;
}
