/**
 * A device's deployments: what is active on it with the status the device reported (and, for operators who may,
 * an undeploy confirmed inline), and its history, newest first, a page at a time.
 */
import { useRef, useState } from 'preact/hooks';
import { dateTime, humanize } from '../format.js';
import { UserText } from '../user-text.js';
import { State } from './facts.js';
import { Alert, InlineConfirm, useFocusLater } from './focus.js';
import type { ActionOutcome, ActiveDeployment, HistoryEntry } from './load.js';
import type { ActResult } from './use-device.js';

/** `scenario@version` of a deployment's `what`. */
export const label = (what: { id: string; subId: string }) => `${what.id}@${what.subId}`;

/** What a deploy or undeploy did, in words: `Undeploy acme-welcome@1.0.0: SUCCESS` or `…: FAILURE (Already deployed)`. */
export function outcomeText(outcome: ActionOutcome): string {
  const cause = outcome.cause === null || outcome.cause === 'NONE' ? '' : ` (${humanize(outcome.cause)})`;
  return `${humanize(outcome.action)} ${outcome.scenario}@${outcome.version}: ${outcome.state}${cause}`;
}

/** The device's reported status of a deployment: state, message, when; or that it has not reported. */
function ReportedStatus({ status }: { status: ActiveDeployment['deviceStatus'] }) {
  if (status === undefined) return <span class="muted">Not reported yet</span>;
  return (
    <>
      <State value={status.state} />
      {status.message === null ? null : (
        <>
          : <UserText text={status.message} />
        </>
      )}
      <br />
      <span class="muted">
        at <time dateTime={status.updated}>{dateTime(status.updated)}</time>
      </span>
    </>
  );
}

/** The active deployments table; with `onUndeploy`, each row has an "Undeploy" button (disabled while `busy`). */
function ActiveTable(props: {
  items: ActiveDeployment[];
  busy: boolean;
  onUndeploy?: ((deployment: ActiveDeployment, opener: HTMLButtonElement) => void) | undefined;
}) {
  const { items, busy, onUndeploy } = props;
  return (
    <table>
      <caption>Active deployments ({items.length})</caption>
      <thead>
        <tr>
          <th scope="col">Scenario version</th>
          <th scope="col">Device status</th>
          <th scope="col">Deployed</th>
          <th scope="col">Note</th>
          {onUndeploy === undefined ? null : <th scope="col">Actions</th>}
        </tr>
      </thead>
      <tbody>
        {items.map((deployment) => (
          <tr key={deployment.id}>
            <td class="mono">
              <UserText text={label(deployment.what)} />
            </td>
            <td>
              <ReportedStatus status={deployment.deviceStatus} />
            </td>
            <td>
              <time dateTime={deployment.deployedAt}>{dateTime(deployment.deployedAt)}</time>
              <br />
              <span class="muted">
                by <UserText text={deployment.deployedBy} />
              </span>
            </td>
            <td>
              {deployment.note === undefined || deployment.note === null ? (
                <span class="muted">—</span>
              ) : (
                <UserText text={deployment.note} />
              )}
            </td>
            {onUndeploy === undefined ? null : (
              <td>
                <button type="button" class="danger" onClick={(event) => onUndeploy(deployment, event.currentTarget)} disabled={busy}>
                  Undeploy <UserText text={label(deployment.what)} />
                </button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The inline confirmation of an undeploy; its confirm button takes the focus when it shows. */
function UndeployConfirm(props: { pending: ActiveDeployment; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  const { pending, ...actions } = props;
  return (
    <InlineConfirm
      id="undeploy-confirm-title"
      title={
        <>
          Undeploy <UserText text={label(pending.what)} />?
        </>
      }
      consequence="The device stops running it and removes it at its next pull."
      confirmLabel={
        <>
          Confirm: undeploy <UserText text={label(pending.what)} />
        </>
      }
      focusKey={pending}
      {...actions}
    />
  );
}

/**
 * The undeploy of one active deployment: `open` (from its row's button, remembered), `confirm`, `cancel`; the
 * deployment waiting for confirmation, whether it runs, its announced outcome or error. The focus follows: after
 * the undeploy, to its outcome (`statusRef`) or error (`alertRef`), since its row and confirmation are gone; after
 * Cancel, back to the row's button.
 */
function useUndeploy(onUndeploy: ((deployment: ActiveDeployment) => Promise<ActResult>) | undefined) {
  const [pending, setPending] = useState<ActiveDeployment | null>(null);
  const [busy, setBusy] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const [error, setError] = useState<string | null>(null);
  const opener = useRef<HTMLButtonElement | null>(null);
  const statusRef = useRef<HTMLParagraphElement>(null);
  const alertRef = useRef<HTMLParagraphElement>(null);
  const focusLater = useFocusLater();

  const open = (deployment: ActiveDeployment, button: HTMLButtonElement) => {
    opener.current = button;
    setPending(deployment);
  };
  const cancel = () => {
    setPending(null);
    opener.current?.focus();
  };
  const confirm = async () => {
    if (pending === null || onUndeploy === undefined) return;
    setBusy(true);
    setError(null);
    const result = await onUndeploy(pending);
    setBusy(false);
    setPending(null);
    if (result.outcome !== undefined) setAnnouncement(outcomeText(result.outcome));
    if (result.error !== undefined) setError(result.error);
    focusLater(result.error === undefined ? statusRef : alertRef);
  };
  return { pending, busy, announcement, error, statusRef, alertRef, open, cancel, confirm };
}

/**
 * The active deployments. With `onUndeploy` (the user may undeploy), each row has an "Undeploy" button that asks for
 * confirmation inline; `onUndeploy` resolves to the outcome to announce, or an error message.
 */
export function ActiveDeployments({
  items,
  onUndeploy,
}: {
  items: ActiveDeployment[];
  onUndeploy?: (deployment: ActiveDeployment) => Promise<ActResult>;
}) {
  const { pending, busy, announcement, error, statusRef, alertRef, open, cancel, confirm } = useUndeploy(onUndeploy);
  return (
    <>
      {items.length === 0 ? (
        <p>Nothing is deployed on this device.</p>
      ) : (
        <ActiveTable items={items} busy={busy} onUndeploy={onUndeploy === undefined ? undefined : open} />
      )}
      {pending === null ? null : <UndeployConfirm pending={pending} busy={busy} onConfirm={confirm} onCancel={cancel} />}
      <p role="status" class="status-line" tabIndex={-1} ref={statusRef}>
        {announcement === '' ? null : <UserText text={announcement} />}
      </p>
      {error === null ? null : <Alert message={error} focusRef={alertRef} />}
    </>
  );
}

/** One history entry's outcome: SUCCESS or FAILURE with its cause, or the status the device reported. */
function HistoryOutcome({ entry }: { entry: HistoryEntry }) {
  if (entry.kind === 'DEVICE_STATUS') {
    return (
      <>
        <State value={entry.deviceStatus.state} />
        {entry.deviceStatus.message === null ? null : (
          <>
            : <UserText text={entry.deviceStatus.message} />
          </>
        )}
      </>
    );
  }
  return (
    <>
      <State value={entry.state} />
      {entry.cause === null || entry.cause === 'NONE' ? null : ` (${humanize(entry.cause)})`}
    </>
  );
}

/** The device's history, newest first; `onMore` (absent on the last page) loads the next page. */
export function History({ items, onMore, loadingMore }: { items: HistoryEntry[]; onMore?: () => void; loadingMore: boolean }) {
  if (items.length === 0) return <p>No deployment has been made to this device yet.</p>;
  return (
    <>
      <table>
        <caption>History, newest first ({items.length} shown)</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Scenario version</th>
            <th scope="col">Outcome</th>
            <th scope="col">By</th>
            <th scope="col">Note</th>
          </tr>
        </thead>
        <tbody>
          {items.map((entry) => (
            <tr key={entry.id}>
              <td>
                <time dateTime={entry.at}>{dateTime(entry.at)}</time>
              </td>
              <td>{entry.kind === 'ACTION' ? humanize(entry.action) : 'Device status'}</td>
              <td class="mono">
                <UserText text={label(entry.what)} />
              </td>
              <td>
                <HistoryOutcome entry={entry} />
              </td>
              <td>
                <UserText text={entry.by} />
              </td>
              <td>{entry.kind === 'ACTION' && entry.note !== null ? <UserText text={entry.note} /> : <span class="muted">—</span>}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {onMore === undefined ? null : (
        <button type="button" onClick={onMore} disabled={loadingMore}>
          {loadingMore ? 'Loading more history…' : 'Show more history'}
        </button>
      )}
    </>
  );
}
