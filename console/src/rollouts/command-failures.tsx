/**
 * "Why devices failed" for a COMMAND rollout: the targets whose commands FAILED, grouped by the message the device gave
 * (each device linked to its page, where its command history shows the rest); those whose commands EXPIRED before the
 * device answered; and those that got no command, grouped by cause (COMMAND_NOT_ADVERTISED: no sub-device advertised
 * it). With `deployments:write` and `devices:write`, "Run the command again on the failed ones". Only the waves whose
 * counts show failures are read, and again only when those figures change (command-rollout.ts).
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { humanize } from '../format.js';
import { UserText } from '../user-text.js';
import type { Rollout, RolloutTarget } from './api.js';
import { commandFailureKey, commandFailureReadsOf, groupByCommandMessage } from './command-rollout.js';
import { Groups, groupBy, RetryButton, readWaves } from './failures.js';

/** The failed targets of the three reads. */
interface CommandFailures {
  failed: RolloutTarget[];
  expired: RolloutTarget[];
  results: RolloutTarget[];
}

/** Reads the targets of the waves whose counts show failures (none when nothing failed), again when those figures change. */
function useCommandFailures(company: string, rollout: Rollout) {
  const failures = useSignal<CommandFailures | null>(null);
  const error = useSignal<string | null>(null);
  const key = commandFailureKey(rollout);
  useEffect(() => {
    let stale = false;
    const reads = commandFailureReadsOf(rollout);
    void (async () => {
      const answers = await Promise.all([
        readWaves(company, rollout.id, { commandState: 'FAILED' }, reads.failed),
        readWaves(company, rollout.id, { commandState: 'EXPIRED' }, reads.expired),
        readWaves(company, rollout.id, { state: 'FAILURE' }, reads.results),
      ]);
      if (stale) return;
      const [failed, expired, results] = answers;
      if ('data' in failed && 'data' in expired && 'data' in results) {
        failures.value = { failed: failed.data, expired: expired.data, results: results.data };
        error.value = null;
      } else error.value = answers.map((answer) => ('error' in answer ? answer.error : null)).find((text) => text !== null) ?? null;
    })();
    return () => {
      stale = true;
    };
  }, [company, rollout.id, key]);
  return { failures, error };
}

/** The devices to run the command on again: a command FAILED or EXPIRED; not those that advertise it nowhere. */
export function commandRetryIds(failures: CommandFailures): string[] {
  return [...new Set([...failures.failed, ...failures.expired].map((target) => target.deviceId))].sort();
}

/** The section (see the module comment). */
export function WhyCommandsFailed({ company, rollout }: { company: string; rollout: Rollout }) {
  const { failures, error } = useCommandFailures(company, rollout);
  const current = failures.value;
  const failed = current === null ? [] : groupByCommandMessage(current.failed, 'FAILED');
  const expired = current === null ? [] : groupBy(current.expired, () => 'Expired before the device answered');
  const results = current === null ? [] : groupBy(current.results, (target) => humanize(target.result.cause ?? 'UNKNOWN'));
  const none = failed.length === 0 && expired.length === 0 && results.length === 0;
  return (
    <section aria-labelledby="failures-title">
      <h2 id="failures-title">Why devices failed</h2>
      {error.value !== null && (
        <p class="error" role="alert">
          <UserText text={error.value} />
        </p>
      )}
      {current === null && error.value === null && <p class="muted">Reading the failed devices…</p>}
      {current !== null && none && <p>No device has failed.</p>}
      <Groups company={company} title="Devices whose command FAILED, by message" groups={failed} label="Command failed" />
      <Groups company={company} title="Devices whose command EXPIRED" groups={expired} label="Command expired" />
      <Groups company={company} title="Devices that got no command, by cause" groups={results} label="No command" />
      {current !== null && <RetryButton company={company} rollout={rollout} ids={commandRetryIds(current)} />}
    </section>
  );
}
