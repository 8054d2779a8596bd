/**
 * Deploying one scenario version to a selection of devices, from the fleet page: choose SCENARIO@VERSION among the
 * scenarios of the companies concerned, resolve "all matching" to device ids, dry run (counts per state and cause),
 * confirm, deploy in journaled chunks with one `Idempotency-Key` each (batch.ts: a reload mid-way followed by the same
 * deploy resends the same keys and nothing is deployed twice), then the summary with the failed devices.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { count, humanize } from '../format.js';
import { hrefOf } from '../router.js';
import { can, claims } from '../session.js';
import {
  DeployCallError,
  executeDeployments,
  type ResolvedDevices,
  resolveMatching,
  type ScenarioChoice,
  SEARCH_RESULT_WINDOW,
  scenariosOf,
} from './api.js';
import {
  BatchStopped,
  CAUSE_MESSAGES,
  chunksOf,
  type DeploymentResultItem,
  deployEntries,
  findJournal,
  type RetryOptions,
  runBatch,
  type SummaryLine,
  summarize,
} from './batch.js';

/** One device, by company and id. */
export interface DeviceRef {
  company: string;
  id: string;
}

/**
 * What the operator selected on the fleet page: chosen rows (or a page of them), or explicitly every device matching
 * the current search (`query`: the search's query string as the URL holds it; `total`: the count the search gave).
 */
export type DeploySelection = { kind: 'devices'; devices: DeviceRef[] } | { kind: 'matching'; query: URLSearchParams; total: number };

/** Most failed devices listed under the summary (the counts cover them all). */
const MAX_LISTED_FAILURES = 500;

/** Where the flow is. */
type Phase = 'choose' | 'checking' | 'reviewed' | 'deploying' | 'done';

/** A chosen version: `company`, scenario id and version, joined by newlines as the select's value. */
interface Choice {
  company: string;
  scenario: string;
  version: string;
}

function choiceValue(choice: Choice): string {
  return `${choice.company}\n${choice.scenario}\n${choice.version}`;
}

function parseChoice(value: string): Choice | undefined {
  const [company, scenario, version] = value.split('\n');
  return company && scenario && version ? { company, scenario, version } : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof DeployCallError ? error.message : 'The service could not be reached. Try again.';
}

/** "1 device" / "12 devices". */
function devices(n: number): string {
  return `${count(n)} ${n === 1 ? 'device' : 'devices'}`;
}

/** The counts per state and cause as a table with its caption. */
function CountsTable({ caption, lines }: { caption: string; lines: SummaryLine[] }) {
  return (
    <table class="deploy-counts">
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

/** The deploy flow for a selection: choose SCENARIO@VERSION, dry run, confirm, progress, summary. */
export function BulkDeploy({ selection, onClose }: { selection: DeploySelection; onClose(): void }) {
  const size = selection.kind === 'devices' ? selection.devices.length : selection.total;
  const heading = useRef<HTMLHeadingElement>(null);
  const summaryHeading = useRef<HTMLHeadingElement>(null);
  const allowed = can('deployments:write');

  const scenarios = useSignal<ScenarioChoice[] | null>(null);
  const resolved = useSignal<ResolvedDevices | null>(
    selection.kind === 'devices' ? { devices: selection.devices, total: selection.devices.length, unreachable: 0 } : null,
  );
  const finding = useSignal<{ found: number; total: number } | null>(null);
  const choice = useSignal('');
  const phase = useSignal<Phase>('choose');
  const checked = useSignal<DeploymentResultItem[] | null>(null);
  const results = useSignal<DeploymentResultItem[] | null>(null);
  const progress = useSignal<{ done: number; total: number } | null>(null);
  const replayedChunks = useSignal(0);
  const error = useSignal<string | null>(null);
  const status = useSignal('');

  // The companies whose scenarios may be chosen: those of the chosen devices, else the search's, else the user's.
  const queryCompanies = selection.kind === 'matching' ? selection.query.getAll('company') : [];
  const mine = claims.value?.companies ?? [];
  const concerned =
    selection.kind === 'devices'
      ? [...new Set(selection.devices.map((device) => device.company))]
      : queryCompanies.length > 0
        ? [...new Set(queryCompanies)]
        : mine;
  // The token's companies only: another company's scenarios cannot be read (nor deployed), its devices are left out.
  const companies = concerned.filter((company) => mine.includes(company));

  useEffect(() => {
    heading.current?.focus();
    if (!allowed) return;
    let live = true;
    const fail = (cause: unknown) => {
      if (live) error.value = messageOf(cause);
    };
    Promise.allSettled(companies.map((company) => scenariosOf(company))).then((lists) => {
      if (!live) return;
      scenarios.value = lists.flatMap((list) => (list.status === 'fulfilled' ? list.value : []));
      const refused = lists.find((list) => list.status === 'rejected');
      if (refused !== undefined) fail(refused.reason);
    });
    if (selection.kind === 'matching') {
      finding.value = { found: 0, total: selection.total };
      resolveMatching(selection.query, (found, total) => {
        if (live) finding.value = { found, total };
      })
        .then((answer) => {
          if (!live) return;
          resolved.value = answer;
          finding.value = null;
        })
        .catch(fail);
    }
    return () => {
      live = false;
    };
    // The selection is the flow's input: the fleet page mounts a new flow for another selection.
  }, []);

  useEffect(() => {
    if (phase.value === 'done') summaryHeading.current?.focus();
  }, [phase.value]);

  if (!allowed) {
    return (
      <section class="bulk-deploy" aria-labelledby="bulk-deploy-title">
        <h2 id="bulk-deploy-title" tabIndex={-1} ref={heading}>
          Deploy to {devices(size)}
        </h2>
        <p class="notice">Your access does not allow deploying (it needs the deployments:write scope).</p>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </section>
    );
  }

  const chosen = parseChoice(choice.value);
  const all = resolved.value?.devices ?? [];
  const companiesWithDevices = new Set(all.map((device) => device.company));
  const targets = chosen === undefined ? [] : all.filter((device) => device.company === chosen.company);
  const leftOut = all.length - targets.length;
  const otherCompanies = chosen === undefined ? [] : [...companiesWithDevices].filter((company) => company !== chosen.company).sort();
  const ids = targets.map((device) => device.id);
  const batchInput =
    chosen === undefined ? undefined : { company: chosen.company, scenario: chosen.scenario, version: chosen.version, ids };
  const interrupted = batchInput === undefined || ids.length === 0 ? undefined : findJournal(sessionStorage, batchInput);
  const offered = (scenarios.value ?? []).filter((scenario) => resolved.value === null || companiesWithDevices.has(scenario.company));
  const byCompany = [...new Set(offered.map((scenario) => scenario.company))].sort();
  const label = chosen === undefined ? '' : `${chosen.scenario}@${chosen.version}`;
  const busy = phase.value === 'checking' || phase.value === 'deploying';

  /** Says, while a request waits to be retried (503 with Retry-After, 409, 429), why and for how long. */
  const retry: RetryOptions = {
    onRetry: (answered, waitMs) => {
      status.value = `The service answered ${answered}: trying again in ${Math.ceil(waitMs / 1000)} s…`;
    },
  };

  const choose = (event: Event) => {
    choice.value = (event.currentTarget as HTMLSelectElement).value;
    checked.value = null;
    results.value = null;
    error.value = null;
    phase.value = 'choose';
  };

  /** Dry run of every entry, chunk by chunk (no keys: nothing is written). */
  const dryRun = async (event: Event) => {
    event.preventDefault();
    if (chosen === undefined || ids.length === 0) return;
    phase.value = 'checking';
    error.value = null;
    status.value = `Checking what deploying ${label} to ${devices(ids.length)} would do…`;
    try {
      const items: DeploymentResultItem[] = [];
      for (const entries of chunksOf(deployEntries(chosen.scenario, chosen.version, ids))) {
        items.push(...(await executeDeployments(chosen.company, entries, { dryRun: true, retry })).items);
      }
      checked.value = items;
      phase.value = 'reviewed';
      const succeed = items.filter((item) => item.state === 'SUCCESS').length;
      status.value = `Dry run done: ${count(succeed)} of ${devices(items.length)} would succeed. Nothing was changed.`;
    } catch (cause) {
      phase.value = 'choose';
      status.value = '';
      error.value = messageOf(cause);
    }
  };

  /** The deploy itself: the journal first, then each chunk with its key, the journal updated after each answer. */
  const deploy = async () => {
    if (chosen === undefined || batchInput === undefined) return;
    phase.value = 'deploying';
    error.value = null;
    try {
      const outcome = await runBatch(
        sessionStorage,
        batchInput,
        async (entries, key) => executeDeployments(chosen.company, entries, { idempotencyKey: key, retry }),
        {
          newId: () => crypto.randomUUID(),
          onStart: ({ journal, resumed }) => {
            status.value = resumed
              ? `Resuming an interrupted deploy of ${label}: every request is sent again with the same keys; those the service had executed are replayed, not deployed twice.`
              : `Deploying ${label} to ${devices(journal.ids.length)}…`;
          },
          onProgress: (done, total) => {
            progress.value = { done, total };
          },
        },
      );
      results.value = outcome.items;
      replayedChunks.value = outcome.replayedChunks;
      phase.value = 'done';
      const failed = outcome.items.filter((item) => item.state === 'FAILURE').length;
      status.value = `Deploy done: ${count(outcome.items.length - failed)} succeeded, ${count(failed)} failed.`;
    } catch (cause) {
      phase.value = 'reviewed';
      status.value = '';
      error.value =
        cause instanceof BatchStopped
          ? `${messageOf(cause.cause)} Stopped at request ${cause.chunk + 1} of ${cause.chunks}: choose "Deploy" again to resume; the requests already answered are replayed, not deployed twice.`
          : 'The deploy could not be recorded in this tab (its storage is full or unavailable): nothing was deployed.';
    } finally {
      progress.value = null;
    }
  };

  const failures = (results.value ?? []).filter((item) => item.state === 'FAILURE');
  const wouldSucceed = (checked.value ?? []).filter((item) => item.state === 'SUCCESS').length;

  return (
    <section class="bulk-deploy" aria-labelledby="bulk-deploy-title">
      <h2 id="bulk-deploy-title" tabIndex={-1} ref={heading}>
        Deploy to {devices(size)}
      </h2>

      {selection.kind === 'matching' && finding.value !== null && (
        <p class="muted">
          Finding the matching devices: {count(finding.value.found)} of {count(Math.min(finding.value.total, SEARCH_RESULT_WINDOW))}…
        </p>
      )}
      {resolved.value !== null && resolved.value.unreachable > 0 && (
        <div class="notice">
          <p>
            {count(resolved.value.unreachable)} of the {devices(resolved.value.total)} matching cannot be reached: a search reaches its
            first {count(SEARCH_RESULT_WINDOW)} results. Narrow the search (add a filter) to deploy to the others. For more devices, use a
            rollout (dss rollout create).
          </p>
          <button type="button" onClick={onClose}>
            Close and narrow the search
          </button>
        </div>
      )}

      {resolved.value !== null && all.length === 0 && <p class="notice">No device matches the search: there is nothing to deploy.</p>}

      {phase.value !== 'done' && (
        <form class="deploy-choice" onSubmit={dryRun}>
          <label>
            Scenario version
            <select value={choice.value} onChange={choose} disabled={busy || scenarios.value === null} required>
              <option value="">{scenarios.value === null ? 'Loading the scenarios…' : 'Choose a scenario version'}</option>
              {byCompany.map((company) => (
                <optgroup key={company} label={company}>
                  {offered
                    .filter((scenario) => scenario.company === company)
                    .flatMap((scenario) =>
                      scenario.versions.map((version) => (
                        <option key={`${scenario.id}@${version}`} value={choiceValue({ company, scenario: scenario.id, version })}>
                          {scenario.id}@{version} ({scenario.name})
                        </option>
                      )),
                    )}
                </optgroup>
              ))}
            </select>
          </label>
          {scenarios.value !== null && offered.length === 0 && (
            <p class="notice">No scenario of these devices' companies has a version to deploy.</p>
          )}
          {chosen !== undefined && leftOut > 0 && (
            <p class="notice">
              {devices(leftOut)} of the selection {leftOut === 1 ? 'is' : 'are'} of{' '}
              {otherCompanies.length === 1 ? 'another company' : 'other companies'} ({otherCompanies.join(', ')}) and left out: a scenario
              belongs to one company, {chosen.company}.
            </p>
          )}
          {chosen !== undefined && resolved.value !== null && ids.length === 0 && (
            <p class="notice">None of the selected devices is of {chosen.company}: there is nothing to deploy.</p>
          )}
          <div class="toolbar">
            <button type="submit" disabled={busy || chosen === undefined || ids.length === 0 || resolved.value === null}>
              Dry run on {devices(ids.length)}
            </button>
            {phase.value !== 'reviewed' && !busy && (
              <button type="button" onClick={onClose}>
                Cancel
              </button>
            )}
          </div>
        </form>
      )}

      {checked.value !== null && phase.value !== 'done' && (
        <div class="deploy-review">
          <CountsTable
            caption={`Dry run: what deploying ${label} to ${devices(checked.value.length)} would do`}
            lines={summarize(checked.value)}
          />
          <p class="muted">Nothing was changed by the dry run.</p>
          {interrupted !== undefined && phase.value === 'reviewed' && (
            <p class="notice">
              An interrupted deploy of {label} to these devices was found ({interrupted.done.length} of {interrupted.chunks} requests
              answered before the reload): resuming sends every request again with the same keys; those the service had executed are
              replayed, not deployed twice.
            </p>
          )}
          {phase.value === 'reviewed' &&
            (wouldSucceed === 0 && interrupted === undefined ? (
              <p class="notice">Nothing to deploy: the dry run says every device would fail.</p>
            ) : (
              <div class="toolbar">
                <button type="button" class="primary" onClick={deploy}>
                  {interrupted === undefined ? 'Deploy' : 'Resume the deploy'} to {devices(ids.length)}
                </button>
                <button type="button" onClick={onClose}>
                  Cancel
                </button>
              </div>
            ))}
        </div>
      )}

      {progress.value !== null && (
        <label class="deploy-progress">
          Deployed {count(progress.value.done)} of {count(progress.value.total)}
          <progress value={progress.value.done} max={progress.value.total} />
        </label>
      )}

      {phase.value === 'done' && results.value !== null && (
        <div class="deploy-summary">
          <h3 tabIndex={-1} ref={summaryHeading}>
            {label} deployed: summary
          </h3>
          {replayedChunks.value > 0 && (
            <p class="muted">
              {replayedChunks.value} of the requests had been answered before the page was reloaded: the service replayed their answers.
            </p>
          )}
          <CountsTable caption={`Deploying ${label} to ${devices(results.value.length)}: results`} lines={summarize(results.value)} />
          {leftOut > 0 && (
            <p class="muted">
              {devices(leftOut)} of {otherCompanies.join(', ')} {leftOut === 1 ? 'was' : 'were'} left out.
            </p>
          )}
          {failures.length > 0 && (
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
                      <a href={hrefOf(`/devices/${encodeURIComponent(chosen?.company ?? '')}/${encodeURIComponent(item.target.id)}`)}>
                        {item.target.id}
                      </a>
                    </td>
                    <td>{item.cause === null ? '—' : humanize(item.cause)}</td>
                    <td>{CAUSE_MESSAGES[item.cause ?? 'NONE']}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {failures.length > MAX_LISTED_FAILURES && (
            <p class="muted">… and {count(failures.length - MAX_LISTED_FAILURES)} more failed devices.</p>
          )}
          <button type="button" onClick={onClose}>
            Close
          </button>
        </div>
      )}

      {error.value !== null && (
        <p role="alert" class="error">
          {error.value}
        </p>
      )}
      <p role="status" class="visually-hidden">
        {status.value}
      </p>
    </section>
  );
}
