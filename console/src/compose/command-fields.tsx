/**
 * The fields of the command rollout composer, each labelled, with its hint and, when it must be fixed, its message
 * (both its description; the field marked invalid): the command (suggested from what the devices advertise), the
 * arguments as JSON, when each command expires, the wave sizes, the failure threshold and a note.
 */
import type { Signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { MAX_COMMAND_JSON_BYTES } from '../../../client/limits.js';
import { EXPIRY_CHOICES } from '../device/command-draft.js';
import { count } from '../format.js';
import { UserText, visibleText } from '../user-text.js';
import type { CommandDraft, CommandDraftField, CommandSuggestion } from './command-plan.js';

/** The form's fields, each a signal. */
export type DraftSignals = { [K in keyof CommandDraft]: Signal<CommandDraft[K]> };

/** The message of each field to fix. */
export type FieldErrors = Partial<Record<CommandDraftField, string>>;

/** The attributes that tie a field to its hint and message: `command-rollout-<name>` and its `-hint` and `-error`. */
function described(name: string, error: string | undefined) {
  const id = `command-rollout-${name}`;
  return {
    id,
    'aria-describedby': error === undefined ? `${id}-hint` : `${id}-hint ${id}-error`,
    ...(error === undefined ? {} : { 'aria-invalid': 'true' as const }),
  };
}

/**
 * A field: its label, its hint, its control and its message; the hint and the message outside the label, so that the
 * field's name is its label's words alone (they are its description).
 */
function Field(props: { name: string; label: string; hint: ComponentChildren; error: string | undefined; children: ComponentChildren }) {
  return (
    <div class="form-field">
      <label htmlFor={`command-rollout-${props.name}`}>{props.label}</label>
      <span class="muted" id={`command-rollout-${props.name}-hint`}>
        {props.hint}
      </span>
      {props.children}
      {props.error === undefined ? null : (
        <span class="error" id={`command-rollout-${props.name}-error`}>
          {props.error}
        </span>
      )}
    </div>
  );
}

/** The value of an input event's field. */
const typed = (event: Event) => (event.currentTarget as HTMLInputElement).value;

/** What the devices advertise, in words: `reboot (5 devices), print-test-page (3 devices)`. */
function SuggestionsHint({ suggestions }: { suggestions: CommandSuggestion[] | undefined | { failure: string } }) {
  if (suggestions === undefined) return <>Reading what these devices advertise…</>;
  if ('failure' in suggestions) return <UserText text={`What these devices advertise could not be read: ${suggestions.failure}`} />;
  if (suggestions.length === 0) return <>None of these devices advertises a command.</>;
  return (
    <>
      Advertised by these devices:{' '}
      <UserText
        text={suggestions.map((each) => `${each.command} (${count(each.devices)} ${each.devices === 1 ? 'device' : 'devices'})`).join(', ')}
      />
    </>
  );
}

/** The command's name, with the advertised commands as its suggestions (a datalist). */
function CommandField(props: {
  value: Signal<string>;
  suggestions: CommandSuggestion[] | undefined | { failure: string };
  error?: string | undefined;
}) {
  const list = Array.isArray(props.suggestions) ? props.suggestions : [];
  return (
    <Field name="command" label="Command" hint={<SuggestionsHint suggestions={props.suggestions} />} error={props.error}>
      <input
        {...described('command', props.error)}
        list="command-rollout-suggestions"
        value={props.value.value}
        autoComplete="off"
        spellcheck={false}
        class="mono"
        onInput={(event) => (props.value.value = typed(event))}
      />
      <datalist id="command-rollout-suggestions">
        {list.map((each) => (
          <option key={each.command} value={visibleText(each.command)}>
            {`${count(each.devices)} ${each.devices === 1 ? 'device' : 'devices'}`}
          </option>
        ))}
      </datalist>
    </Field>
  );
}

/** Every field of the draft (see the module comment). */
export function CommandFields(props: {
  draft: DraftSignals;
  suggestions: CommandSuggestion[] | undefined | { failure: string };
  errors: FieldErrors;
}) {
  const { draft, errors } = props;
  return (
    <>
      <CommandField value={draft.command} suggestions={props.suggestions} error={errors.command} />
      <Field
        name="arguments"
        label="Arguments (JSON)"
        hint={`Sent with every command; null for none. At most ${count(MAX_COMMAND_JSON_BYTES)} bytes.`}
        error={errors.arguments}
      >
        <textarea
          {...described('arguments', errors.arguments)}
          class="mono"
          rows={3}
          spellcheck={false}
          value={draft.arguments.value}
          onInput={(event) => (draft.arguments.value = typed(event))}
        />
      </Field>
      <Field
        name="expiry"
        label="Each command expires after"
        hint="A command the device has not answered by then is EXPIRED."
        error={undefined}
      >
        <select
          {...described('expiry', undefined)}
          value={String(draft.expiresInSeconds.value)}
          onChange={(event) => (draft.expiresInSeconds.value = Number(typed(event)))}
        >
          {EXPIRY_CHOICES.map((choice) => (
            <option key={choice.seconds} value={String(choice.seconds)}>
              {choice.label}
            </option>
          ))}
        </select>
      </Field>
      <Field name="waves" label="Wave sizes" hint="e.g. 10, 100; the rest forms the last wave" error={errors.waves}>
        <input {...described('waves', errors.waves)} value={draft.waves.value} onInput={(event) => (draft.waves.value = typed(event))} />
      </Field>
      <Field
        name="threshold"
        label="Failure threshold (%)"
        hint="A wave whose commands FAILED or EXPIRED above it pauses the rollout; empty: the service's default, 10"
        error={errors.threshold}
      >
        <input
          {...described('threshold', errors.threshold)}
          type="number"
          value={draft.threshold.value}
          onInput={(event) => (draft.threshold.value = typed(event))}
        />
      </Field>
      <Field name="note" label="Note" hint="Optional: why; kept with each command" error={undefined}>
        <input {...described('note', undefined)} value={draft.note.value} onInput={(event) => (draft.note.value = typed(event))} />
      </Field>
    </>
  );
}
