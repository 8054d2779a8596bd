/**
 * The fleet page's rule composer (for `alerts:write`): "Alert me when these devices…" opens a small form that creates
 * an alert rule (POST /companies/{company}/alert-rules) watching the search's filters (its `query`, as a rollout's
 * targets take them): a condition kind (disconnected for more than N minutes, a sub-device in one of some states for
 * more than N minutes, a battery below N %), the fields it needs, and a name. Created, it links to the Alerts page.
 * A full-text search selects no filters, so it cannot make a rule: the page says so instead of offering the button.
 */
import { type Signal, useSignal } from '@preact/signals';
import type { RefObject } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { MAX_ALERT_MINUTES, MAX_ALERT_RULE_NAME_LENGTH, MIN_ALERT_MINUTES } from '../../../client/limits.js';
import { rolloutCompany, targetQueryOf } from '../compose/plan.js';
import { Alert, useFocusLater } from '../device/focus.js';
import { count, humanize } from '../format.js';
import { hrefOf } from '../router.js';
import { claims } from '../session.js';
import { UserText } from '../user-text.js';
import { type AlertCondition, type AlertRule, createRule } from './api.js';
import { conditionOf, conditionText, readableQuery, SUB_DEVICE_STATES } from './words.js';

/** A condition's kind. */
type Kind = AlertCondition['type'];

/** The kinds, as the radio buttons offer them. */
const KINDS: readonly { kind: Kind; label: string }[] = [
  { kind: 'DISCONNECTED_FOR', label: 'are disconnected for more than N minutes' },
  { kind: 'SUBDEVICE_STATE_FOR', label: 'have a sub-device in one of these states for more than N minutes' },
  { kind: 'BATTERY_BELOW', label: 'have a battery below N %' },
];

/** What the composer acts on. */
export interface RuleComposerProps {
  /** The fleet page's URL query (its search). */
  query: URLSearchParams;
  /** The search's total: how many devices match now. */
  total: number;
  /** Whether the search is a full-text one (it has no filters to watch). */
  fullText: boolean;
}

/** The button and, once opened, the form (see the module comment). */
export function RuleComposer({ query, total, fullText }: RuleComposerProps) {
  const open = useSignal(false);
  const button = useRef<HTMLButtonElement>(null);
  const focusLater = useFocusLater();
  if (fullText)
    return <p class="muted compose-hint">An alert rule watches the search's filters: clear the search text to make one from them.</p>;
  const company = rolloutCompany(query, claims.value?.companies ?? []);
  if (company === null) return <p class="muted compose-hint">Choose one company in the header to make an alert rule.</p>;
  if (!open.value) {
    return (
      <div class="toolbar">
        <button type="button" ref={button} onClick={() => (open.value = true)}>
          Alert me when these devices…
        </button>
      </div>
    );
  }
  const close = () => {
    open.value = false;
    focusLater(button);
  };
  return <RuleForm company={company} query={query} total={total} onClose={close} />;
}

/** The search's filters in words: `connection.state=DISCONNECTED` as written, or every device of the company. */
function WatchedDevices({ company, filters, total }: { company: string; filters: string; total: number }) {
  return (
    <p>
      The rule watches{' '}
      {filters === '' ? (
        <>
          every device of <UserText text={company} />
        </>
      ) : (
        <>
          the devices of <UserText text={company} /> that match{' '}
          <code class="mono">
            <UserText text={readableQuery(filters)} />
          </code>
        </>
      )}{' '}
      ({count(total)} now, and those that match later).
    </p>
  );
}

/** The fields of the chosen kind: minutes (and states), or the percent. */
function KindFields({ kind }: { kind: Kind }) {
  if (kind === 'BATTERY_BELOW') {
    return (
      <label>
        Battery level below (%)
        <input name="percent" type="number" min={1} max={100} step={1} required defaultValue="20" />
      </label>
    );
  }
  return (
    <>
      {kind === 'SUBDEVICE_STATE_FOR' ? (
        <fieldset class="admin-companies">
          <legend>Sub-device states</legend>
          {SUB_DEVICE_STATES.map((state) => (
            <label key={state} class="admin-check">
              <input type="checkbox" name="states" value={state} defaultChecked={state === 'DOWN'} />
              {humanize(state)}
            </label>
          ))}
        </fieldset>
      ) : null}
      <label>
        For more than (minutes)
        <input name="minutes" type="number" min={MIN_ALERT_MINUTES} max={MAX_ALERT_MINUTES} step={1} required defaultValue="15" />
      </label>
    </>
  );
}

/** The form's state: the kind chosen, whether it sends, its error, the rule it created. */
interface RuleFormState {
  kind: Signal<Kind>;
  busy: Signal<boolean>;
  error: Signal<string | null>;
  created: Signal<AlertRule | null>;
}

/** The form's state and its submit handler: the condition checked first (its error focused), then the rule created. */
function useRuleForm(company: string, filters: string, alert: RefObject<HTMLParagraphElement>) {
  const state: RuleFormState = {
    kind: useSignal<Kind>('DISCONNECTED_FOR'),
    busy: useSignal(false),
    error: useSignal(null),
    created: useSignal(null),
  };
  const focusLater = useFocusLater();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const condition = conditionOf({
      kind: state.kind.value,
      minutes: String(form.get('minutes') ?? ''),
      percent: String(form.get('percent') ?? ''),
      states: form.getAll('states').map(String),
    });
    state.created.value = null;
    if ('error' in condition) {
      state.error.value = condition.error;
      focusLater(alert);
      return;
    }
    state.busy.value = true;
    const answer = await createRule(company, {
      name: String(form.get('name') ?? '').trim(),
      query: filters,
      condition: condition.condition,
    });
    state.busy.value = false;
    state.error.value = answer.ok ? null : answer.message;
    if (answer.ok) state.created.value = answer.data;
    else focusLater(alert);
  };
  return { state, submit };
}

/** The condition's kinds, as radio buttons in a fieldset; the first takes the focus when the form opens. */
function KindChoice({ kind }: { kind: Signal<Kind> }) {
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  return (
    <fieldset>
      <legend>Condition</legend>
      {KINDS.map((entry, index) => (
        <label key={entry.kind} class="admin-check">
          <input
            type="radio"
            name="kind"
            value={entry.kind}
            ref={index === 0 ? first : undefined}
            checked={kind.value === entry.kind}
            onChange={() => (kind.value = entry.kind)}
          />
          {entry.label}
        </label>
      ))}
    </fieldset>
  );
}

/** The form (see the module comment). */
function RuleForm({ company, query, total, onClose }: { company: string; query: URLSearchParams; total: number; onClose: () => void }) {
  const alert = useRef<HTMLParagraphElement>(null);
  const filters = targetQueryOf(query).toString();
  const { state, submit } = useRuleForm(company, filters, alert);
  const created = state.created.value;
  return (
    <form
      class="admin-form compose rule-form"
      onSubmit={submit}
      onKeyDown={(event) => event.key === 'Escape' && onClose()}
      aria-labelledby="rule-form-title"
    >
      <h3 id="rule-form-title">Alert me when these devices…</h3>
      <WatchedDevices company={company} filters={filters} total={total} />
      <KindChoice kind={state.kind} />
      <KindFields kind={state.kind.value} />
      <label>
        Rule name
        <input name="name" required maxLength={MAX_ALERT_RULE_NAME_LENGTH} autocomplete="off" />
      </label>
      <div class="toolbar">
        <button type="submit" class="primary" disabled={state.busy.value}>
          Create the alert rule
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <div role="status" class="admin-status">
        {created === null ? null : (
          <p>
            Rule <UserText text={created.name} /> created: {conditionText(created.condition)}.{' '}
            <a href={hrefOf('/alerts', { company })}>
              See the alerts and rules of <UserText text={company} />
            </a>
          </p>
        )}
      </div>
      {state.error.value === null ? null : <Alert message={state.error.value} focusRef={alert} />}
    </form>
  );
}
