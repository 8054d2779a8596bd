/**
 * The fleet page's command rollout composer: "Run a command on these N devices…" opens an inline form that runs one
 * command on the search's devices, wave by wave (a COMMAND rollout, POST /companies/{company}/resources/rollouts, whose
 * `targets.query` is the search's filters). The command's name is suggested from what the devices advertise (the
 * filters endpoint's `health.hubs.devices.commands.command` counts, with the search applied). Before it starts, the
 * service's preview (`POST …/rollouts/preview`) says how many of the N advertise the command, the commands by sub-device type
 * and the waves; "Start" is offered for the previewed form only. Started, the rollout's page shows.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { count } from '../format.js';
import { claims } from '../session.js';
import { UserText } from '../user-text.js';
import { type CommandPreviewAnswer, startCommandRollout, useCommandSuggestions } from './command-api.js';
import { CommandFields, type DraftSignals, type FieldErrors } from './command-fields.js';
import { type CommandDraft, commandPlanOf } from './command-plan.js';
import { CommandPreviewView } from './command-preview.js';
import { rolloutCompany, targetQueryOf } from './plan.js';
import { type Refusal, RefusalAlert } from './refusal.js';

/** What the composer acts on: the fleet page's URL query (its search) and the search's total. */
export interface CommandComposerProps {
  query: URLSearchParams;
  total: number;
}

/**
 * The button and, once opened, the form; closing gives the focus back to the button. Without a single company (the
 * search spans several) it says to choose one: a rollout is per company.
 */
export function CommandRolloutComposer({ query, total }: CommandComposerProps) {
  const open = useSignal(false);
  const closed = useSignal(false);
  const button = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (closed.value && !open.value) button.current?.focus();
  }, [closed.value, open.value]);
  const company = rolloutCompany(query, claims.value?.companies ?? []);
  if (company === null) return <p class="muted compose-hint">Choose one company in the header to run a command on these devices.</p>;
  if (!open.value) {
    return (
      <div class="toolbar">
        <button type="button" ref={button} onClick={() => (open.value = true)} disabled={total === 0}>
          Run a command on these {count(total)} {total === 1 ? 'device' : 'devices'}…
        </button>
      </div>
    );
  }
  const close = () => {
    closed.value = true;
    open.value = false;
  };
  return <CommandRolloutForm company={company} query={query} total={total} onClose={close} />;
}

/** The form's state, the expiry an hour as the service's default. */
function useDraft(): DraftSignals {
  return {
    command: useSignal(''),
    arguments: useSignal('null'),
    expiresInSeconds: useSignal(3_600),
    waves: useSignal(''),
    threshold: useSignal(''),
    note: useSignal(''),
  };
}

/** The draft's values now. */
function valuesOf(draft: DraftSignals): CommandDraft {
  return {
    command: draft.command.value,
    arguments: draft.arguments.value,
    expiresInSeconds: draft.expiresInSeconds.value,
    waves: draft.waves.value,
    threshold: draft.threshold.value,
    note: draft.note.value,
  };
}

/**
 * The form's submission: the preview of the draft, or, once previewed and unchanged since, the start.
 * A field to fix gets its message and the focus; a refusal of the service shows in an alert.
 */
function useSubmission(company: string, query: URLSearchParams, draft: DraftSignals) {
  const errors = useSignal<FieldErrors>({});
  const refusal = useSignal<Refusal | null>(null);
  const preview = useSignal<{ key: string; answer: CommandPreviewAnswer } | null>(null);
  const busy = useSignal(false);
  const values = valuesOf(draft);
  const key = JSON.stringify(values);
  const previewed = preview.value !== null && preview.value.key === key;
  const submit = async (event: Event) => {
    event.preventDefault();
    const planned = commandPlanOf(values);
    refusal.value = null;
    if ('error' in planned) {
      errors.value = { [planned.field]: planned.error };
      document.getElementById(`command-rollout-${planned.field}`)?.focus();
      return;
    }
    errors.value = {};
    busy.value = true;
    const targets = targetQueryOf(query).toString();
    const answer = await startCommandRollout(company, targets, planned.plan, previewed);
    busy.value = false;
    if ('refusal' in answer) refusal.value = answer.refusal;
    else if ('preview' in answer) preview.value = { key, answer: answer.preview };
  };
  return { errors: errors.value, refusal: refusal.value, preview: preview.value?.answer ?? null, previewed, busy: busy.value, submit };
}

/** The inline form (see the module comment). */
function CommandRolloutForm({ company, query, total, onClose }: CommandComposerProps & { company: string; onClose(): void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const draft = useDraft();
  const suggestions = useCommandSuggestions(query);
  const submission = useSubmission(company, query, draft);
  const command = draft.command.value.trim();
  return (
    <section class="compose" aria-labelledby="command-compose-title">
      <h2 id="command-compose-title" tabIndex={-1} ref={heading}>
        Run a command on {count(total)} {total === 1 ? 'device' : 'devices'} of <UserText text={company} />
      </h2>
      <form onSubmit={submission.submit}>
        <CommandFields draft={draft} suggestions={suggestions} errors={submission.errors} />
        {submission.preview === null ? null : (
          <CommandPreviewView preview={submission.preview} total={total} command={command} current={submission.previewed} />
        )}
        <RefusalAlert refusal={submission.refusal} />
        <div class="toolbar">
          <button type="submit" class="primary" disabled={submission.busy}>
            {submission.previewed ? (
              <>
                Start: run <UserText text={command} /> on {count(total)} {total === 1 ? 'device' : 'devices'}
              </>
            ) : (
              'Preview'
            )}
          </button>
          <button type="button" onClick={onClose}>
            Close the command form
          </button>
        </div>
      </form>
    </section>
  );
}
