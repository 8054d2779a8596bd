/**
 * "Why devices failed": the rollout's targets whose device reported FAILED, grouped by the device's message, and those
 * whose deployment failed, grouped by cause; each group with its count and its devices linked to their pages. With
 * `deployments:write`, "Roll out again to the failed ones" creates a rollout of the same version and action to them.
 * Only the waves whose counts show failures are read, and again only when those figures change (failure-reads.ts).
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { count, humanize } from '../format.js';
import { hrefOf, navigate } from '../router.js';
import { can } from '../session.js';
import { UserText, visibleText } from '../user-text.js';
import { type FailureFilter, MAX_RETRY_IDS, type Rollout, type RolloutTarget, readTargets, rollOutAgain } from './api.js';
import { failureKey, failureReadsOf } from './failure-reads.js';

/** A group of failed devices: what they share (a message or a cause) and their ids. */
export interface FailureGroup {
  reason: string;
  deviceIds: string[];
}

/** Groups targets by `reasonOf`, the biggest group first (then by reason). */
export function groupBy(targets: RolloutTarget[], reasonOf: (target: RolloutTarget) => string): FailureGroup[] {
  const groups = new Map<string, string[]>();
  for (const target of targets) {
    const reason = reasonOf(target);
    groups.set(reason, [...(groups.get(reason) ?? []), target.deviceId]);
  }
  return [...groups]
    .map(([reason, deviceIds]) => ({ reason, deviceIds }))
    .sort((a, b) => b.deviceIds.length - a.deviceIds.length || a.reason.localeCompare(b.reason));
}

/** The failed targets of both reads, or why they could not be read. */
interface Failures {
  reported: RolloutTarget[];
  results: RolloutTarget[];
}

/** Every target of `waves` (1-based) that the filter keeps: one listing per wave, read at the same time. */
export async function readWaves(
  company: string,
  rolloutId: string,
  filter: FailureFilter,
  waves: number[],
): Promise<{ data: RolloutTarget[] } | { error: string }> {
  const answers = await Promise.all(waves.map((wave) => readTargets(company, rolloutId, { ...filter, wave })));
  const data: RolloutTarget[] = [];
  for (const answer of answers) {
    if (!('data' in answer)) return answer;
    data.push(...answer.data);
  }
  return { data };
}

/**
 * Reads the failed targets of the waves whose counts show failures (failureReadsOf; no request when none does), again
 * only when the failure figures change (failureKey), not on every poll.
 */
function useFailures(company: string, rollout: Rollout) {
  const failures = useSignal<Failures | null>(null);
  const error = useSignal<string | null>(null);
  const key = failureKey(rollout);
  useEffect(() => {
    let stale = false;
    const reads = failureReadsOf(rollout);
    void (async () => {
      const [reported, results] = await Promise.all([
        readWaves(company, rollout.id, { deviceStatus: 'FAILED' }, reads.reported),
        readWaves(company, rollout.id, { state: 'FAILURE' }, reads.results),
      ]);
      if (stale) return;
      if ('data' in reported && 'data' in results) {
        failures.value = { reported: reported.data, results: results.data };
        error.value = null;
      } else error.value = 'error' in reported ? reported.error : 'error' in results ? results.error : null;
    })();
    return () => {
      stale = true;
    };
  }, [company, rollout.id, key]);
  return { failures, error };
}

/** One group: its reason, count, and device links. */
function Group({ company, group, label }: { company: string; group: FailureGroup; label: string }) {
  return (
    <li>
      <p>
        <strong>
          <UserText text={group.reason} />
        </strong>{' '}
        — {count(group.deviceIds.length)} {group.deviceIds.length === 1 ? 'device' : 'devices'}
      </p>
      <ul class="device-links" aria-label={`${label}: ${visibleText(group.reason)}`}>
        {group.deviceIds.map((id) => (
          <li key={id}>
            <a class="mono" href={hrefOf(`/devices/${encodeURIComponent(company)}/${encodeURIComponent(id)}`)}>
              <UserText text={id} />
            </a>
          </li>
        ))}
      </ul>
    </li>
  );
}

/** A titled list of groups; nothing when there is none. */
export function Groups({ company, title, groups, label }: { company: string; title: string; groups: FailureGroup[]; label: string }) {
  if (groups.length === 0) return null;
  return (
    <>
      <h3>{title}</h3>
      <ul class="failure-groups">
        {groups.map((group) => (
          <Group key={group.reason} company={company} group={group} label={label} />
        ))}
      </ul>
    </>
  );
}

/** The devices to roll out to again: reported FAILED or failed to deploy, except those that already had the version. */
export function retryIds(failures: Failures): string[] {
  const ids = new Set(failures.reported.map((target) => target.deviceId));
  for (const target of failures.results) if (target.result.cause !== 'ALREADY_DEPLOYED') ids.add(target.deviceId);
  return [...ids].sort();
}

/**
 * "Roll out again to the failed ones" (for a COMMAND rollout, "Run the command again on the failed ones", which needs
 * `devices:write` too): at most MAX_RETRY_IDS devices (it says so when there are more).
 */
export function RetryButton({ company, rollout, ids }: { company: string; rollout: Rollout; ids: string[] }) {
  const busy = useSignal(false);
  const error = useSignal<string | null>(null);
  const command = rollout.action === 'COMMAND';
  if (!can('deployments:write') || (command && !can('devices:write')) || ids.length === 0) return null;
  const chosen = ids.slice(0, MAX_RETRY_IDS);
  const again = async () => {
    busy.value = true;
    error.value = null;
    const answer = await rollOutAgain(company, rollout, chosen);
    busy.value = false;
    if ('data' in answer) navigate(`/rollouts/${encodeURIComponent(company)}/${encodeURIComponent(answer.data.id)}`);
    else error.value = answer.error;
  };
  return (
    <div>
      {ids.length > chosen.length && (
        <p class="notice">
          {count(ids.length)} devices failed; a rollout lists at most {count(MAX_RETRY_IDS)}: the first {count(chosen.length)} are rolled
          out to again.
        </p>
      )}
      <button type="button" onClick={() => void again()} disabled={busy.value}>
        {command ? 'Run the command again on the failed ones' : 'Roll out again to the failed ones'} ({count(chosen.length)}{' '}
        {chosen.length === 1 ? 'device' : 'devices'})
      </button>
      {error.value !== null && (
        <p class="error" role="alert">
          <UserText text={error.value} />
        </p>
      )}
    </div>
  );
}

/** The "Why devices failed" section of a rollout's page. */
export function WhyDevicesFailed({ company, rollout }: { company: string; rollout: Rollout }) {
  const { failures, error } = useFailures(company, rollout);
  const current = failures.value;
  const reported = current === null ? [] : groupBy(current.reported, (target) => target.deviceStatus?.message || 'No message');
  const results = current === null ? [] : groupBy(current.results, (target) => humanize(target.result.cause ?? 'UNKNOWN'));
  return (
    <section aria-labelledby="failures-title">
      <h2 id="failures-title">Why devices failed</h2>
      {error.value !== null && (
        <p class="error" role="alert">
          <UserText text={error.value} />
        </p>
      )}
      {current === null && error.value === null && <p class="muted">Reading the failed devices…</p>}
      {current !== null && reported.length === 0 && results.length === 0 && <p>No device has failed.</p>}
      <Groups company={company} title="Devices that reported FAILED, by message" groups={reported} label="Reported failed" />
      <Groups company={company} title="Deployments that failed, by cause" groups={results} label="Failed to deploy" />
      {current !== null && <RetryButton company={company} rollout={rollout} ids={retryIds(current)} />}
    </section>
  );
}
