/**
 * The form that runs one advertised command on one sub-device, shown in the page under that sub-device's commands:
 * the command's title and description, its arguments as JSON (prefilled from what the device advertised), when it
 * expires, an optional note, and a submit button that says what it does. JSON that does not parse is refused next to
 * its field; a refusal of the service (a 409 COMMAND_NOT_ADVERTISED: the device's health changed) shows its detail in
 * an alert. The focus goes to the form's heading when it opens, to the field or the alert that needs attention, and
 * Escape or "Close without running" closes it.
 */
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { MAX_COMMAND_JSON_BYTES, MAX_COMMAND_NOTE_LENGTH } from '../../../client/limits.js';
import { count } from '../format.js';
import { UserText } from '../user-text.js';
import { type AdvertisedCommand, type Command, runCommand } from './command-api.js';
import { argumentsText, DEFAULT_EXPIRY_SECONDS, EXPIRY_CHOICES, parseArguments } from './command-draft.js';
import { Alert, useFocusLater } from './focus.js';

/** The sub-device a command runs on: its hub's uid, its own uid, and its label (the page's name for it). */
export interface SubDeviceRef {
  hub: string;
  uid: string;
  label: string;
}

/** What the form runs, and where its outcome goes. */
export interface RunCommandProps {
  company: string;
  deviceId: string;
  sub: SubDeviceRef;
  advertised: AdvertisedCommand;
  /** The command was queued: its answer (QUEUED). */
  onQueued: (command: Command) => void;
  onClose: () => void;
}

/** The form's fields and its submission (see RunCommandForm). */
function useRunDraft(props: RunCommandProps) {
  const { company, deviceId, sub, advertised, onQueued } = props;
  const [args, setArgs] = useState(() => argumentsText(advertised.arguments));
  const [expiry, setExpiry] = useState(DEFAULT_EXPIRY_SECONDS);
  const [note, setNote] = useState('');
  const [fieldError, setFieldError] = useState<string | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const argsRef = useRef<HTMLTextAreaElement>(null);
  const alertRef = useRef<HTMLParagraphElement>(null);
  const focusLater = useFocusLater();

  const submit = async (event: Event) => {
    event.preventDefault();
    setProblem(null);
    const parsed = parseArguments(args);
    if ('error' in parsed) {
      setFieldError(parsed.error);
      focusLater(argsRef);
      return;
    }
    setFieldError(null);
    setBusy(true);
    const run = { hub: sub.hub, device: sub.uid, command: advertised.command, arguments: parsed.value, expiresInSeconds: expiry, note };
    const answer = await runCommand(company, deviceId, run);
    setBusy(false);
    if (answer.ok) onQueued(answer.data);
    else {
      setProblem(answer.message);
      focusLater(alertRef);
    }
  };
  return { args, setArgs, expiry, setExpiry, note, setNote, fieldError, problem, busy, argsRef, alertRef, submit };
}

/** The arguments' text area, its hint, and the message of JSON that does not parse (both its description). */
function ArgumentsField(props: {
  value: string;
  error: string | null;
  fieldRef: Ref<HTMLTextAreaElement>;
  onInput: (value: string) => void;
}) {
  const { value, error, fieldRef, onInput } = props;
  return (
    <div class="form-field">
      <label htmlFor="run-command-arguments">Arguments (JSON)</label>
      <span class="muted" id="run-command-arguments-hint">
        As the device advertised them; null for none. At most {count(MAX_COMMAND_JSON_BYTES)} bytes.
      </span>
      <textarea
        id="run-command-arguments"
        ref={fieldRef}
        class="mono command-arguments"
        rows={Math.min(12, Math.max(3, value.split('\n').length + 1))}
        value={value}
        spellcheck={false}
        aria-invalid={error === null ? undefined : 'true'}
        aria-describedby={error === null ? 'run-command-arguments-hint' : 'run-command-arguments-hint run-command-arguments-error'}
        onInput={(event) => onInput((event.currentTarget as HTMLTextAreaElement).value)}
      />
      {error === null ? null : (
        <span class="error" id="run-command-arguments-error">
          {error}
        </span>
      )}
    </div>
  );
}

/** The expiry choice and the note. */
function ExpiryAndNote(props: { expiry: number; onExpiry: (seconds: number) => void; note: string; onNote: (note: string) => void }) {
  return (
    <>
      <label class="compose-field">
        Expires after
        <select value={String(props.expiry)} onChange={(event) => props.onExpiry(Number((event.currentTarget as HTMLSelectElement).value))}>
          {EXPIRY_CHOICES.map((choice) => (
            <option key={choice.seconds} value={String(choice.seconds)}>
              {choice.label}
            </option>
          ))}
        </select>
      </label>
      <label class="compose-field">
        Note (optional)
        <input
          value={props.note}
          maxLength={MAX_COMMAND_NOTE_LENGTH}
          onInput={(event) => props.onNote((event.currentTarget as HTMLInputElement).value)}
        />
      </label>
    </>
  );
}

/** The form (see the module comment). */
export function RunCommandForm(props: RunCommandProps) {
  const { sub, advertised, onClose } = props;
  const draft = useRunDraft(props);
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  const name = (
    <>
      Run <UserText text={advertised.title} /> on <UserText text={sub.label} />
    </>
  );
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key === 'Escape' && !draft.busy) {
      event.preventDefault();
      onClose();
    }
  };
  return (
    <section class="confirm run-command" aria-labelledby="run-command-title" onKeyDown={onKeyDown}>
      <h4 id="run-command-title" tabIndex={-1} ref={heading}>
        {name}
      </h4>
      <p>
        <UserText text={advertised.description} /> <span class="muted">(command </span>
        <span class="mono">
          <UserText text={advertised.command} />
        </span>
        <span class="muted">)</span>
      </p>
      <form onSubmit={draft.submit}>
        <ArgumentsField value={draft.args} error={draft.fieldError} fieldRef={draft.argsRef} onInput={draft.setArgs} />
        <ExpiryAndNote expiry={draft.expiry} onExpiry={draft.setExpiry} note={draft.note} onNote={draft.setNote} />
        {draft.problem === null ? null : <Alert message={draft.problem} focusRef={draft.alertRef} />}
        <div class="toolbar">
          <button type="submit" class="primary" disabled={draft.busy}>
            {draft.busy ? 'Running…' : name}
          </button>
          <button type="button" onClick={onClose} disabled={draft.busy}>
            Close without running
          </button>
        </div>
      </form>
    </section>
  );
}
