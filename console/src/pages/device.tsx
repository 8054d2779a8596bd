/**
 * One device's page: its resource (details and health), its active deployments and history, and the actions the
 * token's scopes allow. Everything is read once per visit, in parallel, and the deployments again after an action.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { DeleteDevice, DeployForm, IssueCredentials } from '../device/actions.js';
import { ActiveDeployments, History } from '../device/deployments.js';
import { type Device, DeviceFacts, HealthView } from '../device/facts.js';
import {
  type ActionOutcome,
  type ActiveDeployment,
  deployOne,
  type HistoryEntry,
  type Loaded,
  loadActive,
  loadDevice,
  loadHistory,
  loadScenarioVersions,
  type ScenarioVersion,
} from '../device/load.js';
import { hrefOf } from '../router.js';
import { can } from '../session.js';

/** How many times the history is read again, a second apart, until an action's entry shows in it. */
const HISTORY_CATCH_UP_ATTEMPTS = 5;

/** The device's history as shown so far: the pages loaded, and the cursor of the next one (null on the last page). */
interface HistoryState {
  items: HistoryEntry[];
  nextCursor: string | null;
}

/** An error message in an alert region. */
function Alert({ message }: { message: string }) {
  return (
    <p role="alert" class="error">
      {message}
    </p>
  );
}

/** The page of `deviceId` of `company`: its own state, so that another device's page starts afresh (and forgets any secret). */
function DeviceView({ company, deviceId }: { company: string; deviceId: string }) {
  const mayDeploy = can('deployments:write');
  const mayManage = can('devices:write');
  const [device, setDevice] = useState<Loaded<Device> | null>(null);
  const [active, setActive] = useState<Loaded<ActiveDeployment[]> | null>(null);
  const [history, setHistory] = useState<Loaded<HistoryState> | null>(null);
  const [versions, setVersions] = useState<Loaded<ScenarioVersion[]> | null>(null);
  const [moreError, setMoreError] = useState<string | null>(null);
  const [loadingMore, setLoadingMore] = useState(false);

  // Whether the page is still shown: answers arriving after it is left are dropped.
  const mounted = useRef(true);
  useEffect(
    () => () => {
      mounted.current = false;
    },
    [],
  );

  /**
   * Reads the active deployments and the first page of history again (after a deploy or undeploy). The history is
   * derived from the deployments' change stream, a moment after the action: while the action's entry (`actionId`)
   * is not in it yet, the first page is read again, a second apart, a few times at most.
   */
  const refreshDeployments = async (actionId?: string) => {
    const [nextActive, nextHistory] = await Promise.all([loadActive(company, deviceId), loadHistory(company, deviceId)]);
    if (!mounted.current) return;
    setActive(nextActive);
    setHistory(nextHistory);
    setMoreError(null);
    void catchUp(actionId, nextHistory);
  };

  /** Reads the history's first page again until it holds `actionId` (see refreshDeployments). */
  const catchUp = async (actionId: string | undefined, read: Loaded<HistoryState>) => {
    let latest = read;
    for (let attempt = 0; attempt < HISTORY_CATCH_UP_ATTEMPTS; attempt += 1) {
      if (actionId === undefined || !latest.ok || latest.data.items.some((entry) => entry.id === actionId)) return;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (!mounted.current) return;
      latest = await loadHistory(company, deviceId);
      if (!mounted.current) return;
      setHistory(latest);
    }
  };

  useEffect(() => {
    let current = true;
    // The four reads go out together; each part of the page shows as soon as its answer is in.
    void loadDevice(company, deviceId).then((loaded) => current && setDevice(loaded));
    void loadActive(company, deviceId).then((loaded) => current && setActive(loaded));
    void loadHistory(company, deviceId).then((loaded) => current && setHistory(loaded));
    if (mayDeploy) void loadScenarioVersions(company).then((loaded) => current && setVersions(loaded));
    return () => {
      current = false;
    };
  }, [company, deviceId, mayDeploy]);

  const act = async (action: 'DEPLOY' | 'UNDEPLOY', target: ScenarioVersion): Promise<{ outcome?: ActionOutcome; error?: string }> => {
    const result = await deployOne(company, deviceId, action, target);
    await refreshDeployments(result.ok ? result.data.id : undefined);
    return result.ok ? { outcome: result.data } : { error: result.message };
  };

  const showMore = async () => {
    if (history === null || !history.ok || history.data.nextCursor === null) return;
    setLoadingMore(true);
    setMoreError(null);
    const next = await loadHistory(company, deviceId, history.data.nextCursor);
    setLoadingMore(false);
    if (!next.ok) {
      setMoreError(next.message);
      return;
    }
    setHistory({ ok: true, data: { items: [...history.data.items, ...next.data.items], nextCursor: next.data.nextCursor } });
  };

  const back = (
    <p class="breadcrumb">
      <a href={hrefOf('/fleet')}>Back to the fleet</a>
    </p>
  );

  if (device !== null && !device.ok && device.status === 404) {
    return (
      <main id="main">
        <h1>Device not found</h1>
        <p>
          There is no device <span class="mono">{deviceId}</span> in {company}: it may have been deleted, or the address is mistyped.{' '}
          <a href={hrefOf('/fleet')}>Go to the fleet</a>.
        </p>
      </main>
    );
  }

  if (device !== null && !device.ok) {
    // Refused or failed: the deployments and history would fail alike, so the one message says it.
    return (
      <main id="main">
        {back}
        <h1>
          Device <span class="mono">{deviceId}</span>
        </h1>
        <Alert message={device.message} />
      </main>
    );
  }

  return (
    <main id="main">
      {back}
      <h1>
        Device <span class="mono">{deviceId}</span>
        {device?.ok === true && device.data.location?.name !== undefined ? (
          <span class="subtitle"> — {device.data.location.name}</span>
        ) : null}
      </h1>
      {device === null ? (
        <p role="status">Loading the device…</p>
      ) : (
        <>
          <section aria-labelledby="device-details">
            <h2 id="device-details">Details</h2>
            <DeviceFacts device={device.data} />
          </section>
          <section aria-labelledby="device-health">
            <h2 id="device-health">Health</h2>
            <HealthView device={device.data} />
          </section>
        </>
      )}

      <section aria-labelledby="device-deployments">
        <h2 id="device-deployments">Deployments</h2>
        {active === null ? (
          <p class="muted">Loading the active deployments…</p>
        ) : !active.ok ? (
          <Alert message={active.message} />
        ) : (
          <ActiveDeployments
            items={active.data}
            {...(mayDeploy
              ? {
                  onUndeploy: (deployment: ActiveDeployment) =>
                    act('UNDEPLOY', { scenario: deployment.what.id, version: deployment.what.subId }),
                }
              : {})}
          />
        )}
        {mayDeploy ? (
          <section aria-labelledby="device-deploy">
            <h3 id="device-deploy">Deploy a version</h3>
            <DeployForm versions={versions} onDeploy={(target) => act('DEPLOY', target)} />
          </section>
        ) : null}
      </section>

      <section aria-labelledby="device-history">
        <h2 id="device-history">History</h2>
        {history === null ? (
          <p class="muted">Loading the history…</p>
        ) : !history.ok ? (
          <Alert message={history.message} />
        ) : (
          <History
            items={history.data.items}
            loadingMore={loadingMore}
            {...(history.data.nextCursor === null ? {} : { onMore: showMore })}
          />
        )}
        {moreError === null ? null : <Alert message={moreError} />}
      </section>

      {mayManage && device?.ok === true ? (
        <>
          <section aria-labelledby="device-credentials">
            <h2 id="device-credentials">Credentials</h2>
            <IssueCredentials company={company} deviceId={deviceId} />
          </section>
          <section aria-labelledby="device-delete">
            <h2 id="device-delete">Delete device</h2>
            <DeleteDevice company={company} deviceId={deviceId} />
          </section>
        </>
      ) : null}
    </main>
  );
}

/** One device's page, routed from `#/devices/<company>/<deviceId>`. */
export function DevicePage({ company, deviceId }: { company: string; deviceId: string }) {
  return <DeviceView key={`${company}/${deviceId}`} company={company} deviceId={deviceId} />;
}
