/**
 * The device's command history as a table, newest first: the command, its sub-device (by its label in the health
 * report, and its `<hub uid>/<sub-device uid>`), its state (and, while pending, when it expires), when it was created
 * and last changed, who ran it, and what the device answered: its message, and its output as JSON text in a `<pre>`,
 * never HTML. With `onCancel`, a QUEUED command has "Cancel <command>" (a DELIVERED one may be running: it is not offered).
 */
import { dateTime } from '../format.js';
import { UserText } from '../user-text.js';
import type { Command } from './command-api.js';
import { isCancellable, isPending } from './command-list.js';
import { State } from './facts.js';

/** An instant as a `<time>` in the browser's local time. */
function At({ iso }: { iso: string }) {
  return <time dateTime={iso}>{dateTime(iso)}</time>;
}

/** What the device answered: its message and its output (pretty-printed JSON, as text); a dash before it answered. */
function Result({ command }: { command: Command }) {
  const result = command.result;
  if (result === undefined || (result.message === undefined && result.output === undefined)) return <span class="muted">—</span>;
  return (
    <>
      {result.message === undefined ? null : <UserText text={result.message} />}
      {result.output === undefined ? null : (
        <pre class="command-output">
          <UserText text={JSON.stringify(result.output, null, 2)} />
        </pre>
      )}
    </>
  );
}

/** One command's row. */
function Row(props: {
  command: Command;
  nameOf: (subId: string) => string;
  busy: boolean;
  onCancel?: ((command: Command) => void) | undefined;
}) {
  const { command, nameOf, busy, onCancel } = props;
  const pending = isPending(command.state);
  return (
    <tr data-command-id={command.id}>
      <td class="mono">
        <UserText text={command.command} />
      </td>
      <td>
        <UserText text={nameOf(command.target.subId)} />
        <br />
        <span class="muted mono">
          <UserText text={command.target.subId} />
        </span>
      </td>
      <td class="command-state">
        <State value={command.state} />
        {pending ? (
          <>
            <br />
            <span class="muted">
              expires <At iso={command.expiresAt} />
            </span>
          </>
        ) : null}
      </td>
      <td>
        <At iso={command.created} />
      </td>
      <td>
        <At iso={command.updated} />
      </td>
      <td>
        <UserText text={command.by} />
        {command.note === undefined ? null : (
          <>
            <br />
            <span class="muted">
              <UserText text={command.note} />
            </span>
          </>
        )}
      </td>
      <td>
        <Result command={command} />
      </td>
      {onCancel === undefined ? null : (
        <td>
          {isCancellable(command.state) ? (
            <button type="button" class="danger" onClick={() => onCancel(command)} disabled={busy}>
              Cancel <UserText text={command.command} />
            </button>
          ) : null}
        </td>
      )}
    </tr>
  );
}

/**
 * The history table (see the module comment); `busyId` is the command being cancelled (its button disabled). The
 * actions column shows while a command shown can be cancelled. Without commands, a sentence says so.
 */
export function CommandHistoryTable(props: {
  items: Command[];
  nameOf: (subId: string) => string;
  busyId: string | null;
  onCancel?: (command: Command) => void;
}) {
  const { items, nameOf, busyId } = props;
  if (items.length === 0) return <p>No command has been run on this device yet.</p>;
  // The actions column only while a command shown can be cancelled.
  const onCancel = items.some((command) => isCancellable(command.state)) ? props.onCancel : undefined;
  return (
    <table class="command-history">
      <caption>Command history, newest first ({items.length} shown)</caption>
      <thead>
        <tr>
          <th scope="col">Command</th>
          <th scope="col">Sub-device</th>
          <th scope="col">State</th>
          <th scope="col">Created</th>
          <th scope="col">Updated</th>
          <th scope="col">By</th>
          <th scope="col">Result</th>
          {onCancel === undefined ? null : <th scope="col">Actions</th>}
        </tr>
      </thead>
      <tbody>
        {items.map((command) => (
          <Row key={command.id} command={command} nameOf={nameOf} busy={busyId === command.id} onCancel={onCancel} />
        ))}
      </tbody>
    </table>
  );
}
