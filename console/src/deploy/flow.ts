/**
 * The deploy flow's state machine, without JSX: its signals, what they imply (the plan: chosen version, target devices,
 * devices left out, interrupted batch), and the transitions (choose a version, dry run, deploy) as plain functions
 * over the state. Phases: choose → checking → reviewed → deploying → done; a failed dry run goes back to choose, a
 * failed deploy back to reviewed (with the journal kept, so that "Deploy" again resumes it).
 */
import { type Signal, signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { count } from '../format.js';
import { claims } from '../session.js';
import { DeployCallError, executeDeployments, type ResolvedDevices, resolveMatching, type ScenarioChoice, scenariosOf } from './api.js';
import {
  type BatchInput,
  BatchStopped,
  chunksOf,
  type DeploymentResultItem,
  deployEntries,
  findJournal,
  type Journal,
  type RetryOptions,
  runBatch,
} from './batch.js';
import type { DeploySelection, DeviceRef } from './selection.js';

/** Where the flow is. */
export type Phase = 'choose' | 'checking' | 'reviewed' | 'deploying' | 'done';

/** A chosen version: `company`, scenario id and version, joined by newlines as the select's value. */
export interface Choice {
  company: string;
  scenario: string;
  version: string;
}

/** The select's value of a choice (parseChoice reads it back). */
export function choiceValue(choice: Choice): string {
  return `${choice.company}\n${choice.scenario}\n${choice.version}`;
}

/** The choice of a select's value, or undefined for the empty option. */
export function parseChoice(value: string): Choice | undefined {
  const [company, scenario, version] = value.split('\n');
  return company && scenario && version ? { company, scenario, version } : undefined;
}

/** What to tell the user about a failed call: the service's words, else that it could not be reached. */
export function messageOf(error: unknown): string {
  return error instanceof DeployCallError ? error.message : 'The service could not be reached. Try again.';
}

/** "1 device" / "12 devices". */
export function devices(n: number): string {
  return `${count(n)} ${n === 1 ? 'device' : 'devices'}`;
}

/** Everything the flow shows, one signal each. */
export interface FlowState {
  /** The scenarios that may be chosen; null while they load. */
  scenarios: Signal<ScenarioChoice[] | null>;
  /** The selected devices; null while "all matching" is being resolved. */
  resolved: Signal<ResolvedDevices | null>;
  /** Devices found so far while resolving "all matching", and the search's count; null otherwise. */
  finding: Signal<{ found: number; total: number } | null>;
  /** The select's value (choiceValue), '' for none. */
  choice: Signal<string>;
  phase: Signal<Phase>;
  /** The dry run's items, one per target device. */
  checked: Signal<DeploymentResultItem[] | null>;
  /** The deploy's items, one per target device. */
  results: Signal<DeploymentResultItem[] | null>;
  /** Entries answered so far while deploying, of the total; null otherwise. */
  progress: Signal<{ done: number; total: number } | null>;
  /** Requests answered from the service's idempotency store (sent before a reload). */
  replayedChunks: Signal<number>;
  error: Signal<string | null>;
  /** The live status line (retries, progress, outcomes). */
  status: Signal<string>;
}

/** A new flow's state: a selection of devices is resolved at once, "all matching" is not yet. */
export function createFlowState(selection: DeploySelection): FlowState {
  return {
    scenarios: signal(null),
    resolved: signal(selection.kind === 'devices' ? { devices: selection.devices, total: selection.devices.length, unreachable: 0 } : null),
    finding: signal(null),
    choice: signal(''),
    phase: signal('choose'),
    checked: signal(null),
    results: signal(null),
    progress: signal(null),
    replayedChunks: signal(0),
    error: signal(null),
    status: signal(''),
  };
}

/**
 * The companies whose scenarios may be chosen: those of the chosen devices, else the search's, else the user's; only
 * the token's (another company's scenarios cannot be read nor deployed: its devices are left out).
 */
export function companiesOf(selection: DeploySelection, mine: readonly string[]): string[] {
  const queryCompanies = selection.kind === 'matching' ? selection.query.getAll('company') : [];
  const concerned =
    selection.kind === 'devices'
      ? [...new Set(selection.devices.map((device) => device.company))]
      : queryCompanies.length > 0
        ? [...new Set(queryCompanies)]
        : mine;
  return concerned.filter((company) => mine.includes(company));
}

/**
 * Loads, once the flow mounts, the scenarios of the companies concerned and, for "all matching", the matching devices
 * (with their progress); a failure shows in `state.error`. Nothing when `allowed` is false.
 */
export function useFlowSources(state: FlowState, selection: DeploySelection, allowed: boolean): void {
  useEffect(() => {
    if (!allowed) return;
    let live = true;
    const fail = (cause: unknown) => {
      if (live) state.error.value = messageOf(cause);
    };
    const companies = companiesOf(selection, claims.value?.companies ?? []);
    Promise.allSettled(companies.map((company) => scenariosOf(company))).then((lists) => {
      if (!live) return;
      state.scenarios.value = lists.flatMap((list) => (list.status === 'fulfilled' ? list.value : []));
      const refused = lists.find((list) => list.status === 'rejected');
      if (refused !== undefined) fail(refused.reason);
    });
    if (selection.kind === 'matching') {
      state.finding.value = { found: 0, total: selection.total };
      resolveMatching(selection.query, (found, total) => {
        if (live) state.finding.value = { found, total };
      })
        .then((answer) => {
          if (!live) return;
          state.resolved.value = answer;
          state.finding.value = null;
        })
        .catch(fail);
    }
    return () => {
      live = false;
    };
    // The selection is the flow's input: the fleet page mounts a new flow for another selection.
  }, []);
}

/** What the current choice implies. */
export interface Plan {
  chosen: Choice | undefined;
  /** Every selected device (empty while resolving). */
  all: DeviceRef[];
  /** The selected devices of the chosen version's company. */
  targets: DeviceRef[];
  /** Their ids, in order. */
  ids: string[];
  /** Selected devices of other companies than the chosen version's. */
  leftOut: number;
  /** Those other companies, sorted. */
  otherCompanies: string[];
  /** The batch a deploy would run; undefined without a choice. */
  batchInput: BatchInput | undefined;
  /** The journal an interrupted deploy of the same batch left in this tab. */
  interrupted: Journal | undefined;
  /** The scenarios offered: those of the companies with selected devices (all while resolving). */
  offered: ScenarioChoice[];
  /** The companies of the offered scenarios, sorted (the select's groups). */
  byCompany: string[];
  /** "SCENARIO@VERSION", '' without a choice. */
  label: string;
}

/** The plan of the current state (reads the signals, so a component calling it re-renders with them). */
export function planOf(state: FlowState): Plan {
  const chosen = parseChoice(state.choice.value);
  const resolved = state.resolved.value;
  const all = resolved?.devices ?? [];
  const companiesWithDevices = new Set(all.map((device) => device.company));
  const targets = chosen === undefined ? [] : all.filter((device) => device.company === chosen.company);
  const otherCompanies = chosen === undefined ? [] : [...companiesWithDevices].filter((company) => company !== chosen.company).sort();
  const ids = targets.map((device) => device.id);
  const batchInput =
    chosen === undefined ? undefined : { company: chosen.company, scenario: chosen.scenario, version: chosen.version, ids };
  const interrupted = batchInput === undefined || ids.length === 0 ? undefined : findJournal(sessionStorage, batchInput);
  const offered = (state.scenarios.value ?? []).filter((scenario) => resolved === null || companiesWithDevices.has(scenario.company));
  const byCompany = [...new Set(offered.map((scenario) => scenario.company))].sort();
  const label = chosen === undefined ? '' : `${chosen.scenario}@${chosen.version}`;
  return {
    chosen,
    all,
    targets,
    ids,
    leftOut: all.length - targets.length,
    otherCompanies,
    batchInput,
    interrupted,
    offered,
    byCompany,
    label,
  };
}

/** A request or chunk is running: the choice and the buttons wait. */
export function isBusy(phase: Phase): boolean {
  return phase === 'checking' || phase === 'deploying';
}

/** Says, while a request waits to be retried (503 with Retry-After, 409, 429), why and for how long. */
function retryOptions(state: FlowState): RetryOptions {
  return {
    onRetry: (answered, waitMs) => {
      state.status.value = `The service answered ${answered}: trying again in ${Math.ceil(waitMs / 1000)} s…`;
    },
  };
}

/** Another version chosen (the select's value): the earlier dry run and results no longer apply. */
export function chooseVersion(state: FlowState, value: string): void {
  state.choice.value = value;
  state.checked.value = null;
  state.results.value = null;
  state.error.value = null;
  state.phase.value = 'choose';
}

/** Dry run of every entry, chunk by chunk (no keys: nothing is written): checking, then reviewed (or choose on failure). */
export async function dryRun(state: FlowState, plan: Plan): Promise<void> {
  const { chosen, ids, label } = plan;
  if (chosen === undefined || ids.length === 0) return;
  state.phase.value = 'checking';
  state.error.value = null;
  state.status.value = `Checking what deploying ${label} to ${devices(ids.length)} would do…`;
  try {
    const items: DeploymentResultItem[] = [];
    for (const entries of chunksOf(deployEntries(chosen.scenario, chosen.version, ids))) {
      items.push(...(await executeDeployments(chosen.company, entries, { dryRun: true, retry: retryOptions(state) })).items);
    }
    state.checked.value = items;
    state.phase.value = 'reviewed';
    const succeed = items.filter((item) => item.state === 'SUCCESS').length;
    state.status.value = `Dry run done: ${count(succeed)} of ${devices(items.length)} would succeed. Nothing was changed.`;
  } catch (cause) {
    state.phase.value = 'choose';
    state.status.value = '';
    state.error.value = messageOf(cause);
  }
}

/** Why a deploy stopped, and what to do. */
function deployFailure(cause: unknown): string {
  return cause instanceof BatchStopped
    ? `${messageOf(cause.cause)} Stopped at request ${cause.chunk + 1} of ${cause.chunks}: choose "Deploy" again to resume; the requests already answered are replayed, not deployed twice.`
    : 'The deploy could not be recorded in this tab (its storage is full or unavailable): nothing was deployed.';
}

/**
 * The deploy itself (runBatch): the journal first, then each chunk with its key, the journal updated after each
 * answer; deploying with progress, then done (or reviewed on failure, the journal kept for a resume).
 */
export async function deploy(state: FlowState, plan: Plan): Promise<void> {
  const { chosen, batchInput, label } = plan;
  if (chosen === undefined || batchInput === undefined) return;
  state.phase.value = 'deploying';
  state.error.value = null;
  const retry = retryOptions(state);
  try {
    const outcome = await runBatch(
      sessionStorage,
      batchInput,
      async (entries, key) => executeDeployments(chosen.company, entries, { idempotencyKey: key, retry }),
      {
        newId: () => crypto.randomUUID(),
        onStart: ({ journal, resumed }) => {
          state.status.value = resumed
            ? `Resuming an interrupted deploy of ${label}: every request is sent again with the same keys; those the service had executed are replayed, not deployed twice.`
            : `Deploying ${label} to ${devices(journal.ids.length)}…`;
        },
        onProgress: (done, total) => {
          state.progress.value = { done, total };
        },
      },
    );
    state.results.value = outcome.items;
    state.replayedChunks.value = outcome.replayedChunks;
    state.phase.value = 'done';
    const failed = outcome.items.filter((item) => item.state === 'FAILURE').length;
    state.status.value = `Deploy done: ${count(outcome.items.length - failed)} succeeded, ${count(failed)} failed.`;
  } catch (cause) {
    state.phase.value = 'reviewed';
    state.status.value = '';
    state.error.value = deployFailure(cause);
  } finally {
    state.progress.value = null;
  }
}
