/**
 * Deploying one scenario version to a selection of devices, from the fleet page: choose SCENARIO@VERSION among the
 * scenarios of the companies concerned, resolve "all matching" to device ids, dry run (counts per state and cause),
 * confirm, deploy in journaled chunks with one `Idempotency-Key` each (batch.ts: a reload mid-way followed by the same
 * deploy resends the same keys and nothing is deployed twice), then the summary with the failed devices.
 * The state machine is flow.ts, the steps steps.tsx, the focus on each step change focus.ts.
 */
import { useRef, useState } from 'preact/hooks';
import { can } from '../session.js';
import { UserText } from '../user-text.js';
import { createFlowState, devices, planOf, useFlowSources } from './flow.js';
import { useOpenerFocus, useStepFocus } from './focus.js';
import type { DeploySelection } from './selection.js';
import { DeployProgress, DeploySummary, DryRunReview, MatchingNotes, VersionForm } from './steps.js';

/**
 * The deploy flow for a selection: choose SCENARIO@VERSION, dry run, confirm, progress, summary. The focus goes to
 * its heading on open, to each step as it is shown, and back to the control that opened the flow when it closes
 * (`onClose` is called after that).
 */
export function BulkDeploy({ selection, opener, onClose }: { selection: DeploySelection; opener?: Element | null; onClose(): void }) {
  const size = selection.kind === 'devices' ? selection.devices.length : selection.total;
  const heading = useRef<HTMLHeadingElement>(null);
  const review = useRef<HTMLTableElement>(null);
  const summary = useRef<HTMLHeadingElement>(null);
  const allowed = can('deployments:write');
  const [state] = useState(() => createFlowState(selection));
  const restoreFocus = useOpenerFocus(opener);
  const close = () => {
    restoreFocus();
    onClose();
  };
  useFlowSources(state, selection, allowed);
  const phase = state.phase.value;
  useStepFocus(phase, { heading, review, summary });

  const title = (
    <h2 id="bulk-deploy-title" tabIndex={-1} ref={heading}>
      Deploy to {devices(size)}
    </h2>
  );
  if (!allowed) {
    return (
      <section class="bulk-deploy" aria-labelledby="bulk-deploy-title">
        {title}
        <p class="notice">Your access does not allow deploying (it needs the deployments:write scope).</p>
        <button type="button" onClick={close}>
          Close
        </button>
      </section>
    );
  }
  const plan = planOf(state);
  const step = { state, plan, onClose: close };
  return (
    <section class="bulk-deploy" aria-labelledby="bulk-deploy-title">
      {title}
      <MatchingNotes selection={selection} {...step} />
      {phase !== 'done' && <VersionForm {...step} />}
      {state.checked.value !== null && phase !== 'done' && <DryRunReview {...step} tableRef={review} />}
      {state.progress.value !== null && <DeployProgress progress={state.progress.value} />}
      {phase === 'done' && state.results.value !== null && <DeploySummary {...step} results={state.results.value} headingRef={summary} />}
      {state.error.value !== null && (
        <p role="alert" class="error">
          <UserText text={state.error.value} />
        </p>
      )}
      <p role="status" class="visually-hidden">
        <UserText text={state.status.value} />
      </p>
    </section>
  );
}
