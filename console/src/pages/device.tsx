/**
 * One device's page: its resource (details and health), the commands its sub-devices advertise and its command
 * history (live while a command is pending), its active deployments and history, and the actions the token's scopes
 * allow. Everything is read once per visit, in parallel, and the deployments again after an action.
 */

import { useEffect } from 'preact/hooks';
import { DeleteDevice, DeployForm, IssueCredentials } from '../device/actions.js';
import { CommandsSection } from '../device/commands.js';
import { ActiveDeployments, History } from '../device/deployments.js';
import { type Device, DeviceFacts, HealthView } from '../device/facts.js';
import { Alert } from '../device/focus.js';
import type { ActiveDeployment, Loaded, ScenarioVersion } from '../device/load.js';
import { type ActResult, type HistoryState, useDevicePage } from '../device/use-device.js';
import { fleetHref, here, hrefOf } from '../router.js';
import { can } from '../session.js';
import { UserText } from '../user-text.js';

/** Deploys or undeploys a version on the page's device (see useDevicePage). */
type Act = (action: 'DEPLOY' | 'UNDEPLOY', target: ScenarioVersion) => Promise<ActResult>;

/** The link back to the fleet page, to the search the user left it at. */
function BackToFleet() {
  return (
    <p class="breadcrumb">
      <a href={fleetHref()}>Back to the fleet</a>
    </p>
  );
}

/** The page's heading: the device id, and its location's name once the device is read (`location`). */
function DeviceHeading({ deviceId, location }: { deviceId: string; location?: string | undefined }) {
  return (
    <h1>
      Device{' '}
      <span class="mono">
        <UserText text={deviceId} />
      </span>
      {location === undefined ? null : (
        <span class="subtitle">
          {' — '}
          <UserText text={location} />
        </span>
      )}
    </h1>
  );
}

/** The page of a device the service does not know (404). */
function DeviceNotFound({ company, deviceId }: { company: string; deviceId: string }) {
  return (
    <main id="main">
      <h1>Device not found</h1>
      <p>
        There is no device{' '}
        <span class="mono">
          <UserText text={deviceId} />
        </span>{' '}
        in <UserText text={company} />: it may have been deleted, or the address is mistyped. <a href={fleetHref()}>Go to the fleet</a>.
      </p>
    </main>
  );
}

/** The device's details and health, or that they are loading (`device` null). */
function DeviceSummary({ device }: { device: Device | null }) {
  if (device === null) return <p role="status">Loading the device…</p>;
  return (
    <>
      <section aria-labelledby="device-details">
        <h2 id="device-details">Details</h2>
        <DeviceFacts device={device} />
      </section>
      <section aria-labelledby="device-health">
        <h2 id="device-health">Health</h2>
        <HealthView device={device} />
      </section>
    </>
  );
}

/** The active deployments (with undeploy) and the deploy form; `act` is absent when the user may not deploy. */
function DeploymentsSection(props: {
  active: Loaded<ActiveDeployment[]> | null;
  versions: Loaded<ScenarioVersion[]> | null;
  act?: Act | undefined;
}) {
  const { active, versions, act } = props;
  const undeploy = (run: Act) => (deployment: ActiveDeployment) =>
    run('UNDEPLOY', { scenario: deployment.what.id, version: deployment.what.subId });
  return (
    <section aria-labelledby="device-deployments">
      <h2 id="device-deployments">Deployments</h2>
      {active === null ? (
        <p class="muted">Loading the active deployments…</p>
      ) : !active.ok ? (
        <Alert message={active.message} />
      ) : (
        <ActiveDeployments items={active.data} {...(act === undefined ? {} : { onUndeploy: undeploy(act) })} />
      )}
      {act === undefined ? null : (
        <section aria-labelledby="device-deploy">
          <h3 id="device-deploy">Deploy a version</h3>
          <DeployForm versions={versions} onDeploy={(target) => act('DEPLOY', target)} />
        </section>
      )}
    </section>
  );
}

/**
 * The history, newest first, with "Show more history" while pages remain, the message of a failed "Show more", and a
 * link to the history page filtered on the device (its filters, time range and CSV export).
 */
function HistorySection(props: {
  company: string;
  deviceId: string;
  history: Loaded<HistoryState> | null;
  loadingMore: boolean;
  moreError: string | null;
  showMore: () => void;
}) {
  const { history, loadingMore, moreError, showMore } = props;
  return (
    <section aria-labelledby="device-history">
      <h2 id="device-history">History</h2>
      <p>
        <a href={hrefOf('/history', { company: props.company, deviceId: props.deviceId })}>Full history</a>
      </p>
      {history === null ? (
        <p class="muted">Loading the history…</p>
      ) : !history.ok ? (
        <Alert message={history.message} />
      ) : (
        <History items={history.data.items} loadingMore={loadingMore} {...(history.data.nextCursor === null ? {} : { onMore: showMore })} />
      )}
      {moreError === null ? null : <Alert message={moreError} />}
    </section>
  );
}

/** The device's management (with `devices:write`): new credentials, and deleting it. */
function ManageSections({ company, deviceId }: { company: string; deviceId: string }) {
  return (
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
  );
}

/** The page of `deviceId` of `company`: its own state, so that another device's page starts afresh (and forgets any secret). */
function DeviceView({ company, deviceId }: { company: string; deviceId: string }) {
  const mayDeploy = can('deployments:write');
  const mayManage = can('devices:write');
  const { device, active, history, versions, moreError, loadingMore, showMore, act } = useDevicePage(company, deviceId, mayDeploy);
  useSubDeviceFocus(device?.ok === true);

  if (device !== null && !device.ok && device.status === 404) return <DeviceNotFound company={company} deviceId={deviceId} />;
  if (device !== null && !device.ok) {
    // Refused or failed: the deployments and history would fail alike, so the one message says it.
    return (
      <main id="main">
        <BackToFleet />
        <DeviceHeading deviceId={deviceId} />
        <Alert message={device.message} />
      </main>
    );
  }
  // The sections show as loading until the device's own answer is in: should it be refused, that one message says
  // why, rather than the sections' copies of it showing first and then vanishing.
  const known = device !== null;
  return (
    <main id="main">
      <BackToFleet />
      <DeviceHeading deviceId={deviceId} location={device?.data.location?.name} />
      <DeviceSummary device={device?.data ?? null} />
      {device?.ok === true ? <CommandsSection company={company} deviceId={deviceId} device={device.data} mayRun={mayManage} /> : null}
      <DeploymentsSection active={known ? active : null} versions={known ? versions : null} act={mayDeploy ? act : undefined} />
      <HistorySection
        company={company}
        deviceId={deviceId}
        history={known ? history : null}
        loadingMore={loadingMore}
        moreError={moreError}
        showMore={showMore}
      />
      {mayManage && device?.ok === true ? <ManageSections company={company} deviceId={deviceId} /> : null}
    </main>
  );
}

/**
 * Once the device is shown, scrolls to and focuses the hub or sub-device the URL's `sub` names (`<hub uid>` or
 * `<hub uid>/<sub-device uid>`, as an alert's `target.subId`), so that a link from an alert lands on what holds it.
 */
function useSubDeviceFocus(shown: boolean): void {
  const sub = here.value.query.get('sub');
  useEffect(() => {
    if (!shown || sub === null) return;
    const element = document.querySelector<HTMLElement>(`[data-sub-id="${CSS.escape(sub)}"]`);
    if (element === null) return;
    element.setAttribute('tabindex', '-1');
    element.classList.add('sub-device-target');
    element.scrollIntoView({ block: 'start' });
    element.focus({ preventScroll: true });
  }, [shown, sub]);
}

/** One device's page, routed from `#/devices/<company>/<deviceId>[?sub=<hub uid>[/<sub-device uid>]]`. */
export function DevicePage({ company, deviceId }: { company: string; deviceId: string }) {
  return <DeviceView key={`${company}/${deviceId}`} company={company} deviceId={deviceId} />;
}
