/**
 * The fleet page's rollout composer: "Roll out to these N devices…" opens an inline form that creates a rollout
 * (POST /companies/{company}/resources/rollouts) whose `targets.query` is the search's filters. Before creating, it
 * previews the targets: their count (the search's total), their breakdown by facet field (from the filters endpoint,
 * see breakdownOf) and how the waves split them. Created, it navigates to the rollout's page.
 */
import { type Signal, useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import type { components } from '../../../client/index.js';
import { type ScenarioChoice, scenariosOf } from '../deploy/api.js';
import type { FilterDescriptor } from '../fleet/search-query.js';
import { DEVICE_TYPE, recordOf } from '../fleet/search-query.js';
import { count } from '../format.js';
import { navigate } from '../router.js';
import { api, claims, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';
import { type Breakdown, breakdownOf, isoWithOffset, parseWaves, rolloutCompany, splitWaves, targetQueryOf } from './plan.js';
import { type Refusal, RefusalAlert, refusalOf } from './refusal.js';

type CreateBody = components['schemas']['RolloutCreateBody'];

/** What the composer acts on. */
export interface RolloutComposerProps {
  /** The fleet page's URL query (its search). */
  query: URLSearchParams;
  /** The search's total: how many devices the rollout targets. */
  total: number;
}

/**
 * The button and, once opened, the form. Without a single company (the search spans several) it only says to choose
 * one: a rollout is per company.
 */
export function RolloutComposer({ query, total }: RolloutComposerProps) {
  const open = useSignal(false);
  // Closing the form removes the focused element: the focus goes back to the button that opened it.
  const closed = useSignal(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (closed.value && !open.value) button.current?.focus();
  }, [closed.value, open.value]);
  const company = rolloutCompany(query, claims.value?.companies ?? []);
  if (company === null) return <p class="muted compose-hint">Choose one company in the header to roll out.</p>;
  if (!open.value) {
    return (
      <div class="toolbar">
        <button type="button" ref={button} onClick={() => (open.value = true)} disabled={total === 0}>
          Roll out to these {count(total)} {total === 1 ? 'device' : 'devices'}…
        </button>
      </div>
    );
  }
  const close = () => {
    closed.value = true;
    open.value = false;
  };
  return <RolloutForm company={company} query={query} total={total} onClose={close} />;
}

/** The form's fields, as typed. */
interface Draft {
  what: Signal<string>;
  action: Signal<'DEPLOY' | 'UNDEPLOY'>;
  waves: Signal<string>;
  threshold: Signal<string>;
  timeout: Signal<string>;
  note: Signal<string>;
  later: Signal<boolean>;
  at: Signal<string>;
  /** Devices that match the search later join the rollout (`continuous`). */
  continuous: Signal<boolean>;
}

/** The form's state. */
function useDraft(): Draft {
  return {
    what: useSignal(''),
    action: useSignal<'DEPLOY' | 'UNDEPLOY'>('DEPLOY'),
    waves: useSignal(''),
    threshold: useSignal(''),
    timeout: useSignal(''),
    note: useSignal(''),
    later: useSignal(false),
    at: useSignal(''),
    continuous: useSignal(false),
  };
}

/** A number typed in a field, or undefined when empty; NaN when not a number. */
function numberOf(text: string): number | undefined {
  return text.trim() === '' ? undefined : Number(text.trim());
}

/** The create body of the draft, or what to fix first. */
function bodyOf(draft: Draft, query: URLSearchParams): { body: CreateBody } | { error: string } {
  const [id, subId] = draft.what.value.split('@');
  if (id === undefined || subId === undefined || id === '') return { error: 'Choose the scenario version.' };
  const waves = parseWaves(draft.waves.value);
  if ('error' in waves) return { error: `Wave sizes: ${waves.error}` };
  const threshold = numberOf(draft.threshold.value);
  if (threshold !== undefined && !(threshold >= 0 && threshold <= 100))
    return { error: 'The failure threshold is a percentage from 0 to 100.' };
  const minutes = numberOf(draft.timeout.value);
  if (minutes !== undefined && !(Number.isInteger(minutes) && minutes >= 1))
    return { error: 'The wave timeout is a whole number of minutes.' };
  const startAt = draft.later.value ? isoWithOffset(draft.at.value) : undefined;
  if (startAt === null) return { error: 'Give the date and time to start at.' };
  const body: CreateBody = {
    action: draft.action.value,
    what: { type: 'SCENARIO', id, subId },
    targets: { query: targetQueryOf(query).toString() },
    ...(waves.sizes.length > 0 ? { waves: waves.sizes } : {}),
    ...(threshold !== undefined ? { failureThreshold: threshold / 100 } : {}),
    ...(minutes !== undefined ? { waveTimeoutSeconds: minutes * 60 } : {}),
    ...(draft.note.value.trim() !== '' ? { note: draft.note.value } : {}),
    ...(startAt !== undefined ? { startAt } : {}),
    ...(draft.continuous.value ? { continuous: true } : {}),
  };
  return { body };
}

/** Sends the create request; on 202 navigates to the rollout's page, else answers the refusal. */
async function createRollout(company: string, body: CreateBody): Promise<Refusal | null> {
  try {
    const { data, error, response } = await api.main.POST('/companies/{companyId}/resources/rollouts', {
      params: { path: { companyId: company } },
      body,
    });
    if (data !== undefined) {
      navigate(`/rollouts/${encodeURIComponent(company)}/${encodeURIComponent(data.id)}`);
      return null;
    }
    return refusalOf(error, response.status);
  } catch {
    return refusalOf(undefined);
  }
}

/** The scenarios of the company and the filter descriptors of the search, loaded once the form opens. */
function usePreviewData(company: string, query: URLSearchParams) {
  const scenarios = useSignal<ScenarioChoice[] | undefined>(undefined);
  const descriptors = useSignal<FilterDescriptor[] | undefined>(undefined);
  const failure = useSignal<string | null>(null);
  const key = targetQueryOf(query).toString();
  useEffect(() => {
    scenariosOf(company)
      .then((list) => (scenarios.value = list))
      .catch((error: Error) => (failure.value = error.message));
    const params = targetQueryOf(query);
    params.append('type', DEVICE_TYPE);
    api.main
      .GET('/resources/search/filters', { params: { query: recordOf(params) as never } })
      .then(({ data, error, response }) => {
        if (data !== undefined) descriptors.value = data.items;
        else failure.value = problemText(error, response.status);
      })
      .catch(() => (failure.value = problemText(undefined)));
  }, [company, key]);
  return { scenarios: scenarios.value, descriptors: descriptors.value, failure: failure.value };
}

/** What the form acts on. */
interface FormProps {
  company: string;
  query: URLSearchParams;
  total: number;
  onClose(): void;
}

/** The inline form: the fields, the preview and "Create rollout". */
function RolloutForm({ company, query, total, onClose }: FormProps) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const draft = useDraft();
  const { scenarios, descriptors, failure } = usePreviewData(company, query);
  const refusal = useSignal<Refusal | null>(null);
  const busy = useSignal(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const built = bodyOf(draft, query);
    if ('error' in built) {
      refusal.value = { text: built.error, paths: [] };
      return;
    }
    busy.value = true;
    refusal.value = await createRollout(company, built.body);
    busy.value = false;
  };
  return (
    <section class="compose" aria-labelledby="compose-title">
      <h2 id="compose-title" tabIndex={-1} ref={heading}>
        Roll out to {count(total)} {total === 1 ? 'device' : 'devices'} of <UserText text={company} />
      </h2>
      {failure === null ? null : (
        <p role="alert" class="error">
          <UserText text={failure} />
        </p>
      )}
      <form onSubmit={submit}>
        <DraftFields draft={draft} scenarios={scenarios} />
        <Preview
          total={total}
          waves={draft.waves.value}
          breakdown={descriptors === undefined ? undefined : breakdownOf(descriptors, query)}
        />
        <RefusalAlert refusal={refusal.value} />
        <div class="toolbar">
          <button type="submit" class="primary" disabled={busy.value}>
            Create rollout
          </button>
          <button type="button" onClick={onClose}>
            Close the rollout form
          </button>
        </div>
      </form>
    </section>
  );
}

/** The text field of a signal. */
function TextField({ label, value, type = 'text', hint }: { label: string; value: Signal<string>; type?: string; hint?: string }) {
  return (
    <label class="compose-field">
      {label}
      {hint === undefined ? null : <span class="muted"> ({hint})</span>}
      <input type={type} value={value.value} onInput={(event) => (value.value = (event.target as HTMLInputElement).value)} />
    </label>
  );
}

/** The scenario version, action, waves, threshold, timeout, note and start fields. */
function DraftFields({ draft, scenarios }: { draft: Draft; scenarios: ScenarioChoice[] | undefined }) {
  return (
    <>
      <label class="compose-field">
        Scenario version
        <select value={draft.what.value} onChange={(event) => (draft.what.value = (event.target as HTMLSelectElement).value)}>
          <option value="">{scenarios === undefined ? 'Loading the scenarios…' : 'Choose a scenario version'}</option>
          {(scenarios ?? []).flatMap((scenario) =>
            scenario.versions.map((version) => (
              <option key={`${scenario.id}@${version}`} value={`${scenario.id}@${version}`}>
                {visibleText(`${scenario.name} (${scenario.id}@${version})`)}
              </option>
            )),
          )}
        </select>
      </label>
      <fieldset class="compose-choice">
        <legend>Action</legend>
        {(['DEPLOY', 'UNDEPLOY'] as const).map((action) => (
          <label key={action}>
            <input
              type="radio"
              name="compose-action"
              checked={draft.action.value === action}
              onChange={() => (draft.action.value = action)}
            />
            {action === 'DEPLOY' ? 'Deploy' : 'Undeploy'}
          </label>
        ))}
      </fieldset>
      <TextField label="Wave sizes" value={draft.waves} hint="e.g. 10, 100; the rest forms the last wave" />
      <TextField label="Failure threshold (%)" value={draft.threshold} type="number" hint="empty: the service's default, 10" />
      <TextField label="Wave timeout (minutes)" value={draft.timeout} type="number" hint="empty: 60" />
      <TextField label="Note" value={draft.note} />
      <StartField draft={draft} />
      <label class="compose-check">
        <input
          type="checkbox"
          checked={draft.continuous.value}
          onChange={(event) => (draft.continuous.value = (event.target as HTMLInputElement).checked)}
        />
        Keep going: devices that match this search later (registered, or changed into it) get it too, until the rollout is cancelled
      </label>
    </>
  );
}

/** "Start": now, or at a local date and time (sent with the browser's offset). */
function StartField({ draft }: { draft: Draft }) {
  return (
    <fieldset class="compose-choice">
      <legend>Start</legend>
      <label>
        <input type="radio" name="compose-start" checked={!draft.later.value} onChange={() => (draft.later.value = false)} />
        Now
      </label>
      <label>
        <input type="radio" name="compose-start" checked={draft.later.value} onChange={() => (draft.later.value = true)} />
        At a time
      </label>
      <label class="compose-field">
        Start date and time
        <input
          type="datetime-local"
          value={draft.at.value}
          disabled={!draft.later.value}
          onInput={(event) => (draft.at.value = (event.target as HTMLInputElement).value)}
        />
      </label>
    </fieldset>
  );
}

/** The waves' split of the targets in words ("Wave 1: 10, wave 2: 1,234 (the rest)"), or what is wrong with the sizes. */
export function wavePlanText(wavesText: string, total: number): string {
  const parsed = parseWaves(wavesText);
  if ('error' in parsed) return parsed.error;
  return splitWaves(parsed.sizes, total)
    .map((wave, index) => `${index === 0 ? 'Wave' : 'wave'} ${index + 1}: ${count(wave.size)}${wave.rest ? ' (the rest)' : ''}`)
    .join(', ');
}

/** The preview: the target count, its breakdown tables, and the waves. */
function Preview({ total, waves, breakdown }: { total: number; waves: string; breakdown: Breakdown[] | undefined }) {
  return (
    <section class="compose-preview" aria-labelledby="compose-preview-title">
      <h3 id="compose-preview-title">Preview</h3>
      <p class="compose-targets">
        Targets: {count(total)} {total === 1 ? 'device' : 'devices'}
      </p>
      <p role="status" class="compose-waves">
        {wavePlanText(waves, total)}
      </p>
      {breakdown === undefined ? <p class="muted">Counting the targets…</p> : null}
      <div class="compose-tables">
        {(breakdown ?? []).map((field) => (
          <table key={field.field} data-field={field.field}>
            <caption>{field.name}</caption>
            <thead>
              <tr>
                <th scope="col">Value</th>
                <th scope="col">Devices</th>
              </tr>
            </thead>
            <tbody>
              {field.rows.map((row) => (
                <tr key={row.value}>
                  <td>
                    <UserText text={row.name} />
                  </td>
                  <td class="number">{count(row.count)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
      </div>
    </section>
  );
}
