/**
 * The deploy flow's steps, as components over its state (flow.ts): the notes while "all matching" is resolved, the
 * version choice, the dry run's review, the progress of the deploy and its summary with the failed devices.
 */
import type { ComponentChildren, RefObject } from 'preact';
import { count, humanize } from '../format.js';
import { hrefOf } from '../router.js';
import { UserText, visibleText } from '../user-text.js';
import { type ScenarioChoice, SEARCH_RESULT_WINDOW } from './api.js';
import { CAUSE_MESSAGES, type DeploymentResultItem, type SummaryLine, summarize } from './batch.js';
import { choiceValue, chooseVersion, deploy, devices, dryRun, type FlowState, isBusy, type Plan } from './flow.js';
import type { DeploySelection } from './selection.js';

/** Most failed devices listed under the summary (the counts cover them all). */
const MAX_LISTED_FAILURES = 500;

/** What every step gets: the flow's state, its plan, and closing (which returns the focus to the opener). */
interface StepProps {
  state: FlowState;
  plan: Plan;
  onClose(): void;
}

/** The counts per state and cause as a table with its caption; `tableRef` lets a step focus it. */
function CountsTable(props: { caption: ComponentChildren; lines: SummaryLine[]; tableRef?: RefObject<HTMLTableElement> }) {
  const { caption, lines, tableRef } = props;
  return (
    <table class="deploy-counts" tabIndex={tableRef === undefined ? undefined : -1} ref={tableRef}>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">State</th>
          <th scope="col">Cause</th>
          <th scope="col">Devices</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((line) => (
          <tr key={`${line.state} ${line.cause ?? ''}`}>
            <td>{humanize(line.state)}</td>
            <td>{line.cause === null ? '—' : humanize(line.cause)}</td>
            <td class="number">{count(line.count)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * While "all matching" is resolved: the devices found so far; then, when the search reaches fewer than it counts
 * (the result window), why and what to do instead; or that nothing matches.
 */
export function MatchingNotes({ selection, state, plan, onClose }: StepProps & { selection: DeploySelection }) {
  const finding = state.finding.value;
  const resolved = state.resolved.value;
  return (
    <>
      {selection.kind === 'matching' && finding !== null && (
        <p class="muted">
          Finding the matching devices: {count(finding.found)} of {count(Math.min(finding.total, SEARCH_RESULT_WINDOW))}…
        </p>
      )}
      {resolved !== null && resolved.unreachable > 0 && (
        <div class="notice">
          <p>
            {count(resolved.unreachable)} of the {devices(resolved.total)} matching cannot be reached: a search reaches its first{' '}
            {count(SEARCH_RESULT_WINDOW)} results. Narrow the search (add a filter) to deploy to the others. For more devices, use a rollout
            (dss rollout create).
          </p>
          <button type="button" onClick={onClose}>
            Close and narrow the search
          </button>
        </div>
      )}
      {resolved !== null && plan.all.length === 0 && <p class="notice">No device matches the search: there is nothing to deploy.</p>}
    </>
  );
}

/** The select's options: each version of each offered scenario, grouped by company. */
function VersionOptions({ offered, byCompany }: { offered: ScenarioChoice[]; byCompany: string[] }) {
  return (
    <>
      {byCompany.map((company) => (
        <optgroup key={company} label={visibleText(company)}>
          {offered
            .filter((scenario) => scenario.company === company)
            .flatMap((scenario) =>
              scenario.versions.map((version) => (
                <option key={`${scenario.id}@${version}`} value={choiceValue({ company, scenario: scenario.id, version })}>
                  {visibleText(`${scenario.id}@${version} (${scenario.name})`)}
                </option>
              )),
            )}
        </optgroup>
      ))}
    </>
  );
}

/** What the choice leaves out: devices of other companies, or every device (none of the chosen company). */
function ChoiceNotes({ state, plan }: Omit<StepProps, 'onClose'>) {
  const { chosen, leftOut, otherCompanies, ids } = plan;
  if (chosen === undefined) return null;
  return (
    <>
      {leftOut > 0 && (
        <p class="notice">
          {devices(leftOut)} of the selection {leftOut === 1 ? 'is' : 'are'} of{' '}
          {otherCompanies.length === 1 ? 'another company' : 'other companies'} (<UserText text={otherCompanies.join(', ')} />) and left
          out: a scenario belongs to one company, <UserText text={chosen.company} />.
        </p>
      )}
      {state.resolved.value !== null && ids.length === 0 && (
        <p class="notice">
          None of the selected devices is of <UserText text={chosen.company} />: there is nothing to deploy.
        </p>
      )}
    </>
  );
}

/** The version choice and its dry-run button (submitting the form runs the dry run); Cancel until a dry run is shown. */
export function VersionForm({ state, plan, onClose }: StepProps) {
  const phase = state.phase.value;
  const busy = isBusy(phase);
  const scenarios = state.scenarios.value;
  const submit = (event: Event) => {
    event.preventDefault();
    void dryRun(state, plan);
  };
  return (
    <form class="deploy-choice" onSubmit={submit}>
      <label>
        Scenario version
        <select
          value={state.choice.value}
          onChange={(event) => chooseVersion(state, event.currentTarget.value)}
          disabled={busy || scenarios === null}
          required
        >
          <option value="">{scenarios === null ? 'Loading the scenarios…' : 'Choose a scenario version'}</option>
          <VersionOptions offered={plan.offered} byCompany={plan.byCompany} />
        </select>
      </label>
      {scenarios !== null && plan.offered.length === 0 && (
        <p class="notice">No scenario of these devices' companies has a version to deploy.</p>
      )}
      <ChoiceNotes state={state} plan={plan} />
      <div class="toolbar">
        <button type="submit" disabled={busy || plan.chosen === undefined || plan.ids.length === 0 || state.resolved.value === null}>
          Dry run on {devices(plan.ids.length)}
        </button>
        {phase !== 'reviewed' && !busy && (
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}

/**
 * The dry run's counts (the table `tableRef` focuses), the interrupted deploy it would resume, and the deploy and
 * Cancel buttons, unless every device would fail.
 */
export function DryRunReview({ state, plan, onClose, tableRef }: StepProps & { tableRef: RefObject<HTMLTableElement> }) {
  const checked = state.checked.value ?? [];
  const { interrupted, label, ids } = plan;
  const reviewed = state.phase.value === 'reviewed';
  const wouldSucceed = checked.filter((item) => item.state === 'SUCCESS').length;
  return (
    <div class="deploy-review">
      <CountsTable
        caption={
          <>
            Dry run: what deploying <UserText text={label} /> to {devices(checked.length)} would do
          </>
        }
        lines={summarize(checked)}
        tableRef={tableRef}
      />
      <p class="muted">Nothing was changed by the dry run.</p>
      {interrupted !== undefined && reviewed && (
        <p class="notice">
          An interrupted deploy of <UserText text={label} /> to these devices was found ({interrupted.done.length} of {interrupted.chunks}{' '}
          requests answered before the reload): resuming sends every request again with the same keys; those the service had executed are
          replayed, not deployed twice.
        </p>
      )}
      {reviewed &&
        (wouldSucceed === 0 && interrupted === undefined ? (
          <p class="notice">Nothing to deploy: the dry run says every device would fail.</p>
        ) : (
          <div class="toolbar">
            <button type="button" class="primary" onClick={() => void deploy(state, plan)}>
              {interrupted === undefined ? 'Deploy' : 'Resume the deploy'} to {devices(ids.length)}
            </button>
            <button type="button" onClick={onClose}>
              Cancel
            </button>
          </div>
        ))}
    </div>
  );
}

/** The deploy's progress: entries answered of the total. */
export function DeployProgress({ progress }: { progress: { done: number; total: number } }) {
  return (
    <label class="deploy-progress">
      Deployed {count(progress.done)} of {count(progress.total)}
      <progress value={progress.done} max={progress.total} />
    </label>
  );
}

/** The failed devices (at most MAX_LISTED_FAILURES), each with a link to its page, its cause and what that means. */
function FailedDevices({ company, failures }: { company: string; failures: DeploymentResultItem[] }) {
  return (
    <table class="deploy-failures">
      <caption>Failed devices ({count(failures.length)})</caption>
      <thead>
        <tr>
          <th scope="col">Device</th>
          <th scope="col">Cause</th>
          <th scope="col">Message</th>
        </tr>
      </thead>
      <tbody>
        {failures.slice(0, MAX_LISTED_FAILURES).map((item) => (
          <tr key={item.id}>
            <td>
              <a href={hrefOf(`/devices/${encodeURIComponent(company)}/${encodeURIComponent(item.target.id)}`)}>
                <UserText text={item.target.id} />
              </a>
            </td>
            <td>{item.cause === null ? '—' : humanize(item.cause)}</td>
            <td>{CAUSE_MESSAGES[item.cause ?? 'NONE']}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The deploy's summary (its heading is `headingRef`): replayed requests, counts, devices left out, failed devices, Close. */
export function DeploySummary({
  state,
  plan,
  onClose,
  results,
  headingRef,
}: StepProps & { results: DeploymentResultItem[]; headingRef: RefObject<HTMLHeadingElement> }) {
  const { label, leftOut, otherCompanies } = plan;
  const failures = results.filter((item) => item.state === 'FAILURE');
  const replayed = state.replayedChunks.value;
  return (
    <div class="deploy-summary">
      <h3 tabIndex={-1} ref={headingRef}>
        <UserText text={label} /> deployed: summary
      </h3>
      {replayed > 0 && (
        <p class="muted">{replayed} of the requests had been answered before the page was reloaded: the service replayed their answers.</p>
      )}
      <CountsTable
        caption={
          <>
            Deploying <UserText text={label} /> to {devices(results.length)}: results
          </>
        }
        lines={summarize(results)}
      />
      {leftOut > 0 && (
        <p class="muted">
          {devices(leftOut)} of <UserText text={otherCompanies.join(', ')} /> {leftOut === 1 ? 'was' : 'were'} left out.
        </p>
      )}
      {failures.length > 0 && <FailedDevices company={plan.chosen?.company ?? ''} failures={failures} />}
      {failures.length > MAX_LISTED_FAILURES && (
        <p class="muted">… and {count(failures.length - MAX_LISTED_FAILURES)} more failed devices.</p>
      )}
      <button type="button" onClick={onClose}>
        Close
      </button>
    </div>
  );
}
