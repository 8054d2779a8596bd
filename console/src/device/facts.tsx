/**
 * A device resource as a person reads it: its static fields, connection and version, then its health, hub by hub,
 * each sub-device with its state and messages. Every text the device or its operator wrote is a UserText.
 */
import type { components } from '../../../client/index.js';
import { ago, dateTime, humanize } from '../format.js';
import { UserText, visibleText } from '../user-text.js';

/** The device resource (GET /companies/{companyId}/resources/devices/{deviceId}). */
export type Device = components['schemas']['DeviceSearchResource'];
type Hub = components['schemas']['Hub'];
type SubDevice = components['schemas']['SubDevice'];
type Battery = components['schemas']['Battery'];
type Level = components['schemas']['HealthMessage']['level'];

/** Message levels, most severe first: the order the messages are grouped in. A Record so a new level must be placed. */
const LEVEL_RANK: Record<Level, number> = { ERROR: 0, WARNING: 1, INFO: 2, DEBUG: 3 };

/** The class that colours a level or a state (CSS variables with AA contrast in both schemes). */
function toneOf(value: string): string | undefined {
  if (value === 'ERROR' || value === 'DOWN' || value === 'FAILED' || value === 'FAILURE') return 'error';
  if (value === 'WARNING' || value === 'HIBERNATION' || value === 'EXPIRED') return 'warning';
  if (value === 'NOMINAL' || value === 'CONNECTED' || value === 'INSTALLED' || value === 'SUCCESS' || value === 'SUCCEEDED') return 'ok';
  return undefined;
}

/** An enumeration value in words, coloured by its tone (the words carry the meaning; the colour only repeats it). */
export function State({ value }: { value: string }) {
  return <span class={toneOf(value)}>{humanize(value)}</span>;
}

/** Words of an enumeration that stay as written (`CDN`, not `Cdn`). */
const ACRONYMS: Record<string, string> = { AC: 'AC', CDN: 'CDN', HTTP: 'HTTP', IOT: 'IoT', LED: 'LED', USB: 'USB' };

/** An enumeration value in words, keeping acronyms: `GENERIC_USB` → `Generic USB`, `IOT` → `IoT`. */
export function words(value: string): string {
  return value
    .split('_')
    .map((word, index) => ACRONYMS[word] ?? (index === 0 ? word.charAt(0) + word.slice(1).toLowerCase() : word.toLowerCase()))
    .join(' ');
}

/** A capability mode without its type's prefix, which the capability already says: `PAYMENT_CARD_PHYSICAL` → `card physical`. */
function modeWords(type: string, mode: string): string {
  const own = mode.startsWith(`${type}_`) ? mode.slice(type.length + 1) : mode;
  return words(own).replace(/^[A-Z][a-z]/, (start) => start.toLowerCase());
}

/** A coordinate in degrees with its hemisphere: `45.7640° N`. */
function degrees(value: number, positive: string, negative: string): string {
  return `${Math.abs(value).toFixed(4)}° ${value < 0 ? negative : positive}`;
}

/** The device's coordinates on one line (`45.7640° N, 4.8357° E, 170 m`), or null when it has none. */
export function geoLine(geo: Device['geoLocation']): string | null {
  if (geo === undefined) return null;
  const parts: string[] = [];
  if (geo.latitude !== undefined) parts.push(degrees(geo.latitude, 'N', 'S'));
  if (geo.longitude !== undefined) parts.push(degrees(geo.longitude, 'E', 'W'));
  if (geo.altitude !== undefined) parts.push(`${geo.altitude} m`);
  return parts.length === 0 ? null : parts.join(', ');
}

/** An instant as its date and how long ago: `2026-11-27 08:15 (5 min ago)`. */
function When({ iso }: { iso: string | undefined }) {
  if (iso === undefined) return <>—</>;
  const relative = ago(iso);
  return (
    <time dateTime={iso}>
      {dateTime(iso)}
      {relative === '' ? '' : ` (${relative})`}
    </time>
  );
}

/** The connection state and since when. */
function Connection({ connection }: { connection: Device['connection'] }) {
  const since = connection.state === 'CONNECTED' ? connection.connectedSince : connection.disconnectedSince;
  return (
    <>
      <State value={connection.state} />
      {since === undefined ? (connection.state === 'UNKNOWN' ? ' (never seen connected)' : '') : ' since '}
      {since === undefined ? null : <When iso={since} />}
    </>
  );
}

/** Who and where the device is, as `dt`/`dd` pairs of the enclosing list: id, company, serial, location, coordinates. */
function IdentityFacts({ device }: { device: Device }) {
  const geo = geoLine(device.geoLocation);
  return (
    <>
      <dt>Device id</dt>
      <dd class="mono">
        <UserText text={device.id} />
      </dd>
      <dt>Company</dt>
      <dd>
        <UserText text={device.company} />
      </dd>
      <dt>Serial number</dt>
      <dd class="mono">
        <UserText text={device.serial} />
      </dd>
      <dt>Location</dt>
      <dd>{device.location?.name === undefined ? <span class="muted">None given</span> : <UserText text={device.location.name} />}</dd>
      {device.location?.description === undefined ? null : (
        <>
          <dt>Location details</dt>
          <dd>
            <UserText text={device.location.description} />
          </dd>
        </>
      )}
      {geo === null ? null : (
        <>
          <dt>Coordinates</dt>
          <dd>{geo}</dd>
        </>
      )}
    </>
  );
}

/** What the device last reported of itself, as `dt`/`dd` pairs of the enclosing list: platform, version, when. */
function ReportedFacts({ health }: { health: Device['health'] }) {
  return (
    <>
      <dt>Platform</dt>
      <dd>{health === undefined ? <span class="muted">Not reported yet</span> : humanize(health.mode)}</dd>
      <dt>Version</dt>
      <dd>
        {health === undefined ? (
          <span class="muted">Not reported yet</span>
        ) : (
          <>
            <UserText text={health.versionName} /> (code{' '}
            <span class="mono">
              <UserText text={health.versionCode} />
            </span>
            )
          </>
        )}
      </dd>
      {health === undefined ? null : (
        <>
          <dt>Health reported</dt>
          <dd>
            <When iso={health.updated} />
          </dd>
        </>
      )}
    </>
  );
}

/** The static fields, connection and version of a device. */
export function DeviceFacts({ device }: { device: Device }) {
  return (
    <dl class="facts">
      <IdentityFacts device={device} />
      <dt>Connection</dt>
      <dd>
        <Connection connection={device.connection} />
      </dd>
      <ReportedFacts health={device.health} />
      <dt>Registered</dt>
      <dd>
        <When iso={device.created} />
      </dd>
      <dt>Last updated</dt>
      <dd>
        <When iso={device.updated} />
      </dd>
    </dl>
  );
}

/** A battery's fields as `dt`/`dd` pairs of the enclosing list. */
function BatteryFacts({ battery }: { battery: Battery | undefined }) {
  if (battery === undefined) return null;
  const { state, level, cycle, plugged, status } = battery.health;
  return (
    <>
      <dt>Battery</dt>
      <dd>
        {level}%, {words(status).toLowerCase()}; health <State value={state} />; power source {words(plugged)}; {cycle} charge cycles
      </dd>
    </>
  );
}

/** A sub-device's messages, most severe level first, in a table (level, message, key). */
function Messages({ sub }: { sub: SubDevice }) {
  const messages = [...sub.health.messages].sort((a, b) => LEVEL_RANK[a.level] - LEVEL_RANK[b.level]);
  if (messages.length === 0) return <p class="muted">No messages.</p>;
  return (
    <table class="messages">
      <caption>
        Messages of <UserText text={sub.label} />
      </caption>
      <thead>
        <tr>
          <th scope="col">Level</th>
          <th scope="col">Message</th>
          <th scope="col">Key</th>
        </tr>
      </thead>
      <tbody>
        {messages.map((message, index) => (
          // Keys may repeat within a sub-device: the index keeps rows distinct.
          <tr key={`${message.key}-${index}`}>
            <td>
              <State value={message.level} />
            </td>
            <td>
              <UserText text={message.message} />
            </td>
            <td class="mono">
              <UserText text={message.key} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** One sub-device: its facts, then its messages. */
function SubDeviceView({ sub, hubUid }: { sub: SubDevice; hubUid: string }) {
  return (
    <section class="sub-device" aria-label={`Sub-device ${visibleText(sub.label)}`} data-sub-id={`${hubUid}/${sub.uid}`}>
      <h4>
        <UserText text={sub.label} />
      </h4>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <State value={sub.health.state} />
        </dd>
        <dt>Message</dt>
        <dd>{sub.health.message === '' ? <span class="muted">None</span> : <UserText text={sub.health.message} />}</dd>
        <dt>Unique id</dt>
        <dd class="mono">
          <UserText text={sub.uid} />
        </dd>
        <dt>Version</dt>
        <dd>
          <UserText text={sub.version} />
        </dd>
        <dt>Capability</dt>
        <dd>
          {words(sub.capability.type)}
          {sub.capability.modes.length === 0
            ? ''
            : ` (${sub.capability.modes.map((mode) => modeWords(sub.capability.type, mode)).join(', ')})`}
        </dd>
        <BatteryFacts battery={sub.battery} />
      </dl>
      <Messages sub={sub} />
    </section>
  );
}

/** One hub: its facts and its sub-devices. */
function HubView({ hub }: { hub: Hub }) {
  return (
    <section class="hub" aria-label={`Hub ${visibleText(hub.label)}`} data-sub-id={hub.uid}>
      <h3>
        Hub <UserText text={hub.label} />
      </h3>
      <dl class="facts">
        <dt>Unique id</dt>
        <dd class="mono">
          <UserText text={hub.uid} />
        </dd>
        <dt>Version</dt>
        <dd>
          <UserText text={hub.version} />
        </dd>
        <dt>Type</dt>
        <dd>
          <UserText text={hub.type} />
        </dd>
        <dt>Registered</dt>
        <dd>
          <When iso={hub.registeredSince} />
        </dd>
        <BatteryFacts battery={hub.battery} />
      </dl>
      {hub.devices.length === 0 ? (
        <p class="muted">No sub-devices connected.</p>
      ) : (
        hub.devices.map((sub) => <SubDeviceView key={sub.uid} sub={sub} hubUid={hub.uid} />)
      )}
    </section>
  );
}

/** The device's health as it last reported it: every hub and sub-device. */
export function HealthView({ device }: { device: Device }) {
  if (device.health === undefined) return <p class="muted">The device has not reported its health yet.</p>;
  if (device.health.hubs.length === 0) return <p class="muted">The device reports no hubs.</p>;
  return (
    <>
      {device.health.hubs.map((hub) => (
        <HubView key={hub.uid} hub={hub} />
      ))}
    </>
  );
}
