/**
 * Pause, Resume and Cancel of a rollout, offered per its state and only with `deployments:write`. Cancel is confirmed
 * inline ("Cancel rollout <id>", then "Confirm: cancel"). Each answer (the rollout in its new state) is shown at once.
 */
import { useSignal } from '@preact/signals';
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { type Rollout, transition } from './api.js';

/** What an action needs: the rollout, its company, and where its answer goes. */
interface ActionProps {
  company: string;
  rollout: Rollout;
  onChanged: (next: Rollout) => void;
}

/** The inline confirmation of a cancel. */
function CancelConfirm({ id, busy, confirm, back }: { id: string; busy: boolean; confirm: () => void; back: () => void }) {
  return (
    <section class="confirm" aria-labelledby="cancel-title">
      <h3 id="cancel-title">
        Cancel rollout <UserText text={id} />?
      </h3>
      <p>No further device is deployed to; the deployments already made stay.</p>
      <button type="button" class="danger" onClick={confirm} disabled={busy}>
        Confirm: cancel
      </button>{' '}
      <button type="button" onClick={back} disabled={busy}>
        Keep it
      </button>
    </section>
  );
}

/** The buttons the rollout's state and the token's scopes allow; nothing without `deployments:write`. */
export function RolloutActions({ company, rollout, onChanged }: ActionProps) {
  const busy = useSignal(false);
  const confirming = useSignal(false);
  const error = useSignal<string | null>(null);
  if (!can('deployments:write')) return null;
  const run = async (verb: 'pause' | 'resume' | 'cancel') => {
    busy.value = true;
    error.value = null;
    const answer = await transition(company, rollout.id, verb);
    busy.value = false;
    confirming.value = false;
    if ('data' in answer) onChanged(answer.data);
    else error.value = answer.error;
  };
  const { state } = rollout;
  return (
    <div class="toolbar rollout-actions">
      {state === 'RUNNING' && (
        <button type="button" onClick={() => void run('pause')} disabled={busy.value}>
          Pause rollout
        </button>
      )}
      {state === 'PAUSED' && (
        <button type="button" onClick={() => void run('resume')} disabled={busy.value}>
          Resume rollout
        </button>
      )}
      {(state === 'SCHEDULED' || state === 'RUNNING' || state === 'PAUSED') && !confirming.value && (
        <button type="button" onClick={() => (confirming.value = true)} disabled={busy.value}>
          Cancel rollout <UserText text={rollout.id} />
        </button>
      )}
      {confirming.value && (
        <CancelConfirm id={rollout.id} busy={busy.value} confirm={() => void run('cancel')} back={() => (confirming.value = false)} />
      )}
      {error.value !== null && (
        <p class="error" role="alert">
          <UserText text={error.value} />
        </p>
      )}
    </div>
  );
}
