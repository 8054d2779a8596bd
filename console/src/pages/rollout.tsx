/**
 * One rollout's page (`#/rollouts/<company>/<rolloutId>`): its facts, its waves (bars and the same numbers as a
 * table), Pause / Resume / Cancel, and why devices failed; for a COMMAND rollout, its command and arguments, its
 * commands' final states per wave, and its targets with their commands' states and messages. Kept fresh by polling
 * the rollout (one GET every 2 s while the tab is visible and the rollout can still change); state changes are
 * announced.
 */

import { rolloutSubject } from '../../../client/rollout-events.js';
import { count, dateTime, humanize } from '../format.js';
import { RolloutActions } from '../rollouts/actions.js';
import type { Rollout } from '../rollouts/api.js';
import { WhyCommandsFailed } from '../rollouts/command-failures.js';
import { CommandTargets } from '../rollouts/command-targets.js';
import { CommandWaveBars, CommandWaveTable } from '../rollouts/command-waves.js';
import { EventLog } from '../rollouts/event-log.js';
import { WhyDevicesFailed } from '../rollouts/failures.js';
import { doneOf, totalOf } from '../rollouts/progress.js';
import { useRollout } from '../rollouts/use-rollout.js';
import { WaveBars, WaveTable } from '../rollouts/waves.js';
import { hrefOf } from '../router.js';
import { UserText } from '../user-text.js';

/** A duration in seconds in words (`3600` → `1 h`, `90` → `90 s`). */
function duration(seconds: number): string {
  if (seconds % 3600 === 0) return `${count(seconds / 3600)} h`;
  if (seconds % 60 === 0) return `${count(seconds / 60)} min`;
  return `${count(seconds)} s`;
}

/**
 * What the rollout does, as `dt`/`dd` pairs of the enclosing list: its scenario version; or its command, the arguments
 * sent with each (JSON as text) and how long each command may wait for the device.
 */
function Subject({ rollout }: { rollout: Rollout }) {
  if (rollout.action === 'COMMAND' && rollout.command !== undefined) {
    return (
      <>
        <dt>Command</dt>
        <dd class="mono rollout-command">
          <UserText text={rollout.command.command} />
        </dd>
        <dt>Arguments</dt>
        <dd>
          <pre class="command-output rollout-arguments">
            <UserText text={JSON.stringify(rollout.command.arguments ?? null, null, 2)} />
          </pre>
        </dd>
        <dt>Each command expires after</dt>
        <dd>{duration(rollout.command.expiresInSeconds)}</dd>
      </>
    );
  }
  return (
    <>
      <dt>Scenario version</dt>
      <dd class="mono">
        <UserText text={rolloutSubject(rollout)} />
      </dd>
    </>
  );
}

/** The rollout's facts: state, version or command, action, progress, threshold, timeout, note, creation, start. */
function Facts({ rollout }: { rollout: Rollout }) {
  return (
    <dl class="facts">
      <dt>State</dt>
      <dd class="rollout-state">{humanize(rollout.state)}</dd>
      <Subject rollout={rollout} />
      <dt>Action</dt>
      <dd>{humanize(rollout.action)}</dd>
      <dt>Progress</dt>
      <dd>
        {count(doneOf(rollout))} of {count(totalOf(rollout))} devices
      </dd>
      {rollout.continuous && (
        <>
          <dt>Continuous</dt>
          <dd class="rollout-joined">
            {count(rollout.joined ?? 0)} {rollout.joined === 1 ? 'device' : 'devices'} joined since creation (counted in the last wave);
            devices that start matching its search join until it is cancelled
          </dd>
        </>
      )}
      <dt>Failure threshold</dt>
      <dd>
        {Math.round(rollout.failureThreshold * 1000) / 10} %{' '}
        {rollout.action === 'COMMAND' ? "of a wave's commands FAILED or EXPIRED" : 'of a wave reporting FAILED'}
      </dd>
      <dt>Wave timeout</dt>
      <dd>{duration(rollout.waveTimeoutSeconds)}</dd>
      <dt>Note</dt>
      <dd>{rollout.note === null ? '—' : <UserText text={rollout.note} />}</dd>
      <dt>Created</dt>
      <dd>
        by <UserText text={rollout.createdBy} /> on <time dateTime={rollout.created}>{dateTime(rollout.created)}</time>
      </dd>
      {rollout.startAt !== undefined && (
        <>
          <dt>Starts at</dt>
          <dd>
            <time dateTime={rollout.startAt}>{dateTime(rollout.startAt)}</time>
          </dd>
        </>
      )}
    </dl>
  );
}

/** The page's body once the rollout is read. */
function RolloutBody({ company, rollout, show }: { company: string; rollout: Rollout; show: (next: Rollout) => void }) {
  return (
    <>
      {rollout.pausedReason !== undefined && (
        <p class="notice paused-reason">
          <strong>Paused:</strong> <UserText text={rollout.pausedReason} />
        </p>
      )}
      <Facts rollout={rollout} />
      <RolloutActions company={company} rollout={rollout} onChanged={show} />
      <section aria-labelledby="waves-title">
        <h2 id="waves-title">Waves</h2>
        {rollout.action === 'COMMAND' ? <CommandWaveBars rollout={rollout} /> : <WaveBars rollout={rollout} />}
        {rollout.action === 'COMMAND' ? <CommandWaveTable rollout={rollout} /> : <WaveTable rollout={rollout} />}
      </section>
      {rollout.action === 'COMMAND' ? (
        <>
          <WhyCommandsFailed company={company} rollout={rollout} />
          <CommandTargets company={company} rollout={rollout} />
        </>
      ) : (
        <WhyDevicesFailed company={company} rollout={rollout} />
      )}
      <EventLog rollout={rollout} />
    </>
  );
}

/** One rollout's page; a rollout the company does not have says so, with a link to the rollouts. */
export function RolloutPage({ company, rolloutId }: { company: string; rolloutId: string }) {
  const { rollout, error, status, announcement, show } = useRollout(company, rolloutId);
  const listHref = hrefOf('/rollouts', { company });
  return (
    <main id="main">
      <p>
        <a href={listHref}>
          All rollouts of <UserText text={company} />
        </a>
      </p>
      <h1>
        Rollout <UserText text={rolloutId} />
      </h1>
      <div role="status" aria-live="polite" class="visually-hidden">
        {announcement.value}
      </div>
      {status.value === 404 ? (
        <p class="error" role="alert">
          <UserText text={company} /> has no rollout <UserText text={rolloutId} />. <a href={listHref}>See its rollouts</a>.
        </p>
      ) : (
        error.value !== null && (
          <p class="error" role="alert">
            <UserText text={error.value} />
          </p>
        )
      )}
      {rollout.value === null && error.value === null && <p class="muted">Reading the rollout…</p>}
      {rollout.value !== null && <RolloutBody company={company} rollout={rollout.value} show={show} />}
    </main>
  );
}
