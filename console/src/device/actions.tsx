/**
 * What an operator may do to one device, each offered only to a token whose scopes allow it (the page decides):
 * deploy a scenario version, issue new client credentials (the secret shown once), delete the device.
 */
import type { Ref } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { components } from '../../../client/index.js';
import { navigate } from '../router.js';
import { api, problemText } from '../session.js';
import { UserText, visibleText } from '../user-text.js';
import { outcomeText } from './deployments.js';
import { Alert, InlineConfirm, useFocusLater } from './focus.js';
import type { Loaded, ScenarioVersion } from './load.js';
import type { ActResult } from './use-device.js';

/**
 * The deploy form: a select of the company's SCENARIO@VERSION and a button naming the choice, once the versions are
 * read (a message while they load, fail, or when there are none). `onDeploy` resolves to the result item's outcome
 * (announced) or an error message (shown as an alert).
 */
export function DeployForm({
  versions,
  onDeploy,
}: {
  versions: Loaded<ScenarioVersion[]> | null;
  onDeploy: (target: ScenarioVersion) => Promise<ActResult>;
}) {
  if (versions === null) return <p class="muted">Loading the company's scenarios…</p>;
  if (!versions.ok) return <Alert message={versions.message} />;
  if (versions.data.length === 0) return <p>The company has no scenario to deploy yet: upload one first.</p>;
  return <DeployChoice versions={versions.data} onDeploy={onDeploy} />;
}

/**
 * The deploy form proper (see DeployForm), `versions` not empty. The button is disabled while the deploy runs; once
 * it ends, the focus returns to it (the outcome is announced by the status line, an error by its alert).
 */
function DeployChoice({ versions, onDeploy }: { versions: ScenarioVersion[]; onDeploy: (target: ScenarioVersion) => Promise<ActResult> }) {
  const [chosen, setChosen] = useState(0);
  const [busy, setBusy] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const [error, setError] = useState<string | null>(null);
  const button = useRef<HTMLButtonElement>(null);
  const focusLater = useFocusLater();
  const target = versions[chosen] ?? versions[0];

  const submit = async (event: Event) => {
    event.preventDefault();
    if (target === undefined) return;
    setBusy(true);
    setError(null);
    setAnnouncement('');
    const result = await onDeploy(target);
    setBusy(false);
    if (result.outcome !== undefined) setAnnouncement(outcomeText(result.outcome));
    if (result.error !== undefined) setError(result.error);
    focusLater(button);
  };

  return (
    <form onSubmit={submit} class="toolbar">
      <label>
        Scenario version
        <select value={String(chosen)} onChange={(event) => setChosen(Number((event.currentTarget as HTMLSelectElement).value))}>
          {versions.map((option, index) => (
            <option key={`${option.scenario}@${option.version}`} value={String(index)}>
              {visibleText(`${option.scenario}@${option.version}`)}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" class="primary" ref={button} disabled={busy || target === undefined}>
        {busy ? (
          'Deploying…'
        ) : (
          <>
            Deploy <UserText text={`${target?.scenario}@${target?.version}`} />
          </>
        )}
      </button>
      <p role="status" class="status-line">
        {announcement === '' ? null : <UserText text={announcement} />}
      </p>
      {error === null ? null : <Alert message={error} />}
    </form>
  );
}

type Credentials = components['schemas']['DeviceCredentials'];

/**
 * The state of issuing new credentials: the stage of the confirmation, the credentials once issued (focusing the
 * secret field `secretRef` when they arrive), an error message, and the copy of the secret with what it did.
 * `issue` resolves to whether credentials were issued.
 */
function useCredentials(company: string, deviceId: string) {
  const [stage, setStage] = useState<'idle' | 'confirming' | 'busy'>('idle');
  const [credentials, setCredentials] = useState<Credentials | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [copied, setCopied] = useState('');
  const secretRef = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (credentials !== null) secretRef.current?.focus();
  }, [credentials]);

  const issue = async (): Promise<boolean> => {
    setStage('busy');
    setError(null);
    setCopied('');
    let issued = false;
    try {
      const {
        data,
        error: problem,
        response,
      } = await api.main.POST('/companies/{companyId}/resources/devices/{deviceId}/credentials', {
        params: { path: { companyId: company, deviceId } },
      });
      if (data !== undefined) setCredentials(data);
      else setError(problemText(problem, response.status));
      issued = data !== undefined;
    } catch {
      setError(problemText(undefined));
    }
    setStage('idle');
    return issued;
  };

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(credentials?.clientSecret ?? '');
    } catch {
      // Without the clipboard API (or its permission), the field is selected for the user to copy.
      secretRef.current?.select();
      setCopied('Select the secret and copy it with your keyboard (the clipboard is not available here).');
      return;
    }
    setCopied('The secret is copied to the clipboard.');
  };

  return { stage, setStage, credentials, error, copied, secretRef, issue, copy };
}

/** The new credentials, shown once: the warning, the client id, the secret (`secretRef`) and "Copy secret". */
function NewCredentials(props: { credentials: Credentials; secretRef: Ref<HTMLInputElement>; copied: string; onCopy: () => void }) {
  const { credentials, secretRef, copied, onCopy } = props;
  return (
    <div class="secret">
      <p class="warning-box">
        <strong>This secret will not be shown again.</strong> Give it to the device now: its previous secret no longer works.
      </p>
      <label>
        Client id
        <input class="mono" readOnly value={credentials.clientId} />
      </label>
      <label>
        Client secret
        <input class="mono" readOnly value={credentials.clientSecret} ref={secretRef} />
      </label>
      <div class="toolbar">
        <button type="button" onClick={onCopy}>
          Copy secret
        </button>
      </div>
      <p role="status" class="status-line">
        {copied}
      </p>
    </div>
  );
}

/** The confirmation of new credentials, inline; its confirm button takes the focus when it shows. */
function CredentialsConfirm(props: { deviceId: string; busy: boolean; onConfirm: () => void; onCancel: () => void }) {
  const { deviceId, ...actions } = props;
  return (
    <InlineConfirm
      id="credentials-confirm-title"
      title={
        <>
          Issue new credentials for <UserText text={deviceId} />?
        </>
      }
      consequence="The new secret replaces the current one at once: the device stops working until it is given the new secret."
      confirmLabel={
        <>
          Replace the secret of <UserText text={deviceId} />
        </>
      }
      {...actions}
    />
  );
}

/**
 * Issuing new client credentials: confirmed first (the new secret replaces the current one at once, so the device
 * must be given it), then the client id and secret shown once. The secret lives only in this component's state:
 * leaving the page forgets it. The focus follows: to the confirm button, then to the secret field (or to the error
 * alert); Cancel returns it to "Issue new credentials".
 */
export function IssueCredentials({ company, deviceId }: { company: string; deviceId: string }) {
  const { stage, setStage, credentials, error, copied, secretRef, issue, copy } = useCredentials(company, deviceId);
  const opener = useRef<HTMLButtonElement>(null);
  const alert = useRef<HTMLParagraphElement>(null);
  const focusLater = useFocusLater();
  const confirm = async () => {
    if (!(await issue())) focusLater(alert);
  };
  const cancel = () => {
    setStage('idle');
    focusLater(opener);
  };
  return (
    <>
      {credentials === null ? null : <NewCredentials credentials={credentials} secretRef={secretRef} copied={copied} onCopy={copy} />}
      {stage === 'idle' ? (
        <button type="button" ref={opener} onClick={() => setStage('confirming')}>
          Issue new credentials
        </button>
      ) : (
        <CredentialsConfirm deviceId={deviceId} busy={stage === 'busy'} onConfirm={confirm} onCancel={cancel} />
      )}
      {error === null ? null : <Alert message={error} focusRef={alert} />}
    </>
  );
}

/**
 * The state of deleting the device: the id typed to confirm, whether the deletion runs, its error message, and
 * `remove`, the form's submit handler (nothing until the typed id is the device's; once deleted, the fleet page shows).
 */
function useDeleteDevice(company: string, deviceId: string) {
  const [typed, setTyped] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const remove = async (event: Event) => {
    event.preventDefault();
    if (typed !== deviceId) return;
    setBusy(true);
    setError(null);
    try {
      const { error: problem, response } = await api.main.DELETE('/companies/{companyId}/resources/devices/{deviceId}', {
        params: { path: { companyId: company, deviceId } },
      });
      if (response.ok) {
        navigate('/fleet');
        return;
      }
      setError(problemText(problem, response.status));
    } catch {
      setError(problemText(undefined));
    }
    setBusy(false);
  };

  return { typed, setTyped, busy, error, remove };
}

/** Deleting the device: the button stays disabled until the device id is typed; then the fleet page shows. */
export function DeleteDevice({ company, deviceId }: { company: string; deviceId: string }) {
  const { typed, setTyped, busy, error, remove } = useDeleteDevice(company, deviceId);
  return (
    <form onSubmit={remove}>
      <p>
        Deleting the device undeploys everything deployed on it, stops its credentials and tokens at once and removes it from search. This
        cannot be undone.
      </p>
      <div class="toolbar">
        <label>
          <span>
            Type <UserText text={deviceId} /> to confirm
          </span>
          <input
            value={typed}
            onInput={(event) => setTyped((event.currentTarget as HTMLInputElement).value)}
            autoComplete="off"
            spellcheck={false}
          />
        </label>
        <button type="submit" class="danger" disabled={busy || typed !== deviceId}>
          {busy ? (
            'Deleting…'
          ) : (
            <>
              Delete device <UserText text={deviceId} />
            </>
          )}
        </button>
      </div>
      {error === null ? null : (
        <p role="alert" class="error">
          <UserText text={error} />
        </p>
      )}
    </form>
  );
}
