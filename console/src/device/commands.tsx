/**
 * The device page's "Commands" section: what each sub-device of the latest health report advertises (title,
 * description, command name), each with "Run" for a token with `devices:write` (run-command.tsx), then the device's
 * command history, live while a command is pending (use-commands.ts), each QUEUED command with "Cancel" for the same
 * tokens. A viewer sees both, without the buttons. Texts from the device (titles, labels, messages, outputs) are text.
 */
import { useRef, useState } from 'preact/hooks';
import { humanize } from '../format.js';
import { UserText } from '../user-text.js';
import { type AdvertisedCommand, type Command, cancelCommand } from './command-api.js';
import { CommandHistoryTable } from './command-history.js';
import { isPending } from './command-list.js';
import type { Device } from './facts.js';
import { Alert, useFocusLater } from './focus.js';
import { RunCommandForm, type SubDeviceRef } from './run-command.js';
import { type CommandHistory, useCommandHistory } from './use-commands.js';

/** A sub-device of the health report with its hub's label and what it advertises. */
interface AdvertisingSub extends SubDeviceRef {
  hubLabel: string;
  commands: AdvertisedCommand[];
}

/** Every sub-device of the device's latest health report, hub by hub. */
function subDevicesOf(device: Device): AdvertisingSub[] {
  return (device.health?.hubs ?? []).flatMap((hub) =>
    hub.devices.map((sub) => ({ hub: hub.uid, hubLabel: hub.label, uid: sub.uid, label: sub.label, commands: sub.commands })),
  );
}

/** A sub-device's `<hub uid>/<sub-device uid>`: a command's `target.subId`, and its key on the page. */
function keyOf(sub: SubDeviceRef): string {
  return `${sub.hub}/${sub.uid}`;
}

/** The command open in the form: its sub-device and what it advertises. */
interface Opened {
  sub: AdvertisingSub;
  advertised: AdvertisedCommand;
}

/** One sub-device's advertised commands as a table; with `onRun`, each row has a "Run" button naming what it runs. */
function AdvertisedTable({
  sub,
  onRun,
}: {
  sub: AdvertisingSub;
  onRun?: ((advertised: AdvertisedCommand, button: HTMLButtonElement) => void) | undefined;
}) {
  return (
    <table class="advertised-commands">
      <caption>
        Commands of <UserText text={sub.label} /> <span class="muted">(hub </span>
        <UserText text={sub.hubLabel} />
        <span class="muted">)</span>
      </caption>
      <thead>
        <tr>
          <th scope="col">Title</th>
          <th scope="col">Description</th>
          <th scope="col">Command</th>
          {onRun === undefined ? null : <th scope="col">Actions</th>}
        </tr>
      </thead>
      <tbody>
        {sub.commands.map((advertised, index) => (
          // Names may repeat in a report: the index keeps rows distinct.
          <tr key={`${advertised.command}-${index}`}>
            <td>
              <UserText text={advertised.title} />
            </td>
            <td>
              <UserText text={advertised.description} />
            </td>
            <td class="mono">
              <UserText text={advertised.command} />
            </td>
            {onRun === undefined ? null : (
              <td>
                <button type="button" onClick={(event) => onRun(advertised, event.currentTarget)}>
                  Run
                  <span class="visually-hidden">
                    {' '}
                    <UserText text={advertised.title} /> on <UserText text={sub.label} />
                  </span>
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * Running a command: the form open (and the button that opened it, which gets the focus back when it closes), and the
 * announcement of the last command queued.
 */
function useRunning(history: CommandHistory) {
  const [opened, setOpened] = useState<Opened | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const opener = useRef<HTMLButtonElement | null>(null);
  const open = (sub: AdvertisingSub) => (advertised: AdvertisedCommand, button: HTMLButtonElement) => {
    opener.current = button;
    setAnnouncement('');
    setOpened({ sub, advertised });
  };
  const close = () => {
    setOpened(null);
    opener.current?.focus();
  };
  const queued = (command: Command) => {
    history.put(command);
    if (opened !== null) setAnnouncement(`${opened.advertised.title} on ${opened.sub.label}: ${humanize(command.state)}.`);
    close();
  };
  return { opened, announcement, open, close, queued };
}

/** The sub-devices' advertised commands, the run form under the table of the one open, and the queued announcement. */
function Advertised(props: { company: string; deviceId: string; subs: AdvertisingSub[]; mayRun: boolean; history: CommandHistory }) {
  const { company, deviceId, subs, mayRun, history } = props;
  const running = useRunning(history);
  const advertising = subs.filter((sub) => sub.commands.length > 0);
  if (advertising.length === 0) return <p class="muted">No sub-device advertises a command in the latest health report.</p>;
  return (
    <>
      {advertising.map((sub) => (
        <div key={keyOf(sub)}>
          <AdvertisedTable sub={sub} onRun={mayRun ? running.open(sub) : undefined} />
          {running.opened === null || keyOf(running.opened.sub) !== keyOf(sub) ? null : (
            <RunCommandForm
              key={running.opened.advertised.command}
              company={company}
              deviceId={deviceId}
              sub={sub}
              advertised={running.opened.advertised}
              onQueued={running.queued}
              onClose={running.close}
            />
          )}
        </div>
      ))}
      <p role="status" class="status-line">
        {running.announcement === '' ? null : <UserText text={running.announcement} />}
      </p>
    </>
  );
}

/**
 * Cancelling a QUEUED command: `cancel` (no confirmation: the device has not fetched it, so it has done nothing yet), the id of the one being cancelled, its outcome announced or its problem's detail. The row's button
 * goes away with the pending state: the focus moves to the outcome (`statusRef`) or the alert (`alertRef`).
 */
function useCancel(company: string, deviceId: string, history: CommandHistory, nameOf: (subId: string) => string) {
  const [busyId, setBusyId] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [error, setError] = useState<string | null>(null);
  const statusRef = useRef<HTMLParagraphElement>(null);
  const alertRef = useRef<HTMLParagraphElement>(null);
  const focusLater = useFocusLater();
  const cancel = async (command: Command) => {
    setBusyId(command.id);
    setError(null);
    setAnnouncement('');
    const answer = await cancelCommand(company, deviceId, command.id);
    setBusyId(null);
    if (answer.ok) {
      history.put(answer.data);
      setAnnouncement(`${command.command} on ${nameOf(command.target.subId)}: ${humanize(answer.data.state)}.`);
      focusLater(statusRef);
    } else {
      setError(answer.message);
      history.refresh();
      focusLater(alertRef);
    }
  };
  return { busyId, announcement, error, statusRef, alertRef, cancel };
}

/** The command history: its table (with Cancel for `mayRun`), its live announcements, and "Show more commands". */
function History(props: {
  company: string;
  deviceId: string;
  history: CommandHistory;
  mayRun: boolean;
  nameOf: (subId: string) => string;
}) {
  const { company, deviceId, history, mayRun, nameOf } = props;
  const cancelling = useCancel(company, deviceId, history, nameOf);
  const pending = (history.items ?? []).some((command) => isPending(command.state));
  return (
    <>
      <h3>Command history</h3>
      {history.items === undefined && history.failure === null ? <p class="muted">Loading the commands…</p> : null}
      {history.items === undefined ? null : (
        <CommandHistoryTable
          items={history.items}
          nameOf={nameOf}
          busyId={cancelling.busyId}
          {...(mayRun ? { onCancel: (command: Command) => void cancelling.cancel(command) } : {})}
        />
      )}
      {pending ? <p class="muted">The states refresh every few seconds while a command is pending.</p> : null}
      <div role="status" class="visually-hidden">
        {history.announcement === '' ? null : <UserText text={history.announcement} />}
      </div>
      <p role="status" class="status-line" tabIndex={-1} ref={cancelling.statusRef}>
        {cancelling.announcement === '' ? null : <UserText text={cancelling.announcement} />}
      </p>
      {cancelling.error === null ? null : <Alert message={cancelling.error} focusRef={cancelling.alertRef} />}
      {history.failure === null ? null : <Alert message={history.failure} />}
      {history.hasMore ? (
        <button type="button" onClick={history.more} disabled={history.loadingMore}>
          {history.loadingMore ? 'Loading more commands…' : 'Show more commands'}
        </button>
      ) : null}
    </>
  );
}

/**
 * The "Commands" section of `deviceId` of `company` (see the module comment); `mayRun` when the token has
 * `devices:write`.
 */
export function CommandsSection({
  company,
  deviceId,
  device,
  mayRun,
}: {
  company: string;
  deviceId: string;
  device: Device;
  mayRun: boolean;
}) {
  const subs = subDevicesOf(device);
  const nameOf = (subId: string) => subs.find((sub) => keyOf(sub) === subId)?.label ?? subId;
  const history = useCommandHistory(company, deviceId, nameOf);
  return (
    <section aria-labelledby="device-commands">
      <h2 id="device-commands">Commands</h2>
      {device.health === undefined ? (
        <p class="muted">The device has not reported its health yet: it advertises no command.</p>
      ) : (
        <Advertised company={company} deviceId={deviceId} subs={subs} mayRun={mayRun} history={history} />
      )}
      <History company={company} deviceId={deviceId} history={history} mayRun={mayRun} nameOf={nameOf} />
    </section>
  );
}
