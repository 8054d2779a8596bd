/**
 * Health reports of devices (`PUT /device/health`): each report proves the device is alive (its presence entry) and
 * carries its health; the device item, which feeds the search index, is written only when something searchable
 * changes, so a fleet reporting an unchanged health every minute costs one small write per report and no index update.
 */
import { isDeepStrictEqual } from 'node:util';
import { UnauthorizedError } from '../shared/errors.js';
import type { Principal } from '../shared/principal.js';
import type { Device } from './model.js';
import type { DeviceRepository, PresenceRepository } from './ports.js';
import { activeDevice } from './session.js';

/**
 * Bounds of a health report's members (the same bounds hold for the health search shows): texts of
 * ids, labels, versions, keys and names (`shortText`, characters), of messages and descriptions (`longText`), and the
 * most hubs per device, sub-devices per hub, messages and commands per sub-device.
 */
export const HEALTH_LIMITS = { shortText: 256, longText: 2_048, hubs: 16, subDevices: 64, messages: 32, commands: 32 } as const;

/**
 * Largest health report, bytes of its JSON serialized without white space: the device item (health included) must
 * stay far below DynamoDB's 400 KB item limit, and the search document small. A full demo device's health is ~7 KB.
 */
export const MAX_HEALTH_REPORT_BYTES = 65_536;

/**
 * The 413 check of a health report, run on the parsed JSON before its schema: the `detail` when it has more than
 * MAX_HEALTH_REPORT_BYTES bytes serialized without white space, else undefined. Measured without recursion
 * (serializedBytes), so that no nesting of the body can exhaust the stack here.
 */
export function healthReportTooLarge(body: unknown): string | undefined {
  const bytes = serializedBytes(body);
  if (bytes <= MAX_HEALTH_REPORT_BYTES) return undefined;
  return `The health report has ${bytes} bytes (serialized without white space); at most ${MAX_HEALTH_REPORT_BYTES} are accepted. Nothing was recorded.`;
}

/**
 * UTF-8 bytes of `JSON.stringify(value)` (no white space), counted with a loop and an explicit stack instead of
 * serializing, so that any depth is measured: JSON.stringify recurses and overflows the stack at a few thousand levels.
 * Members JSON.stringify leaves out (undefined, functions, symbols) are left out; in arrays they count as `null`.
 */
function serializedBytes(value: unknown): number {
  let bytes = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (Array.isArray(next)) {
      bytes += 2 + Math.max(0, next.length - 1);
      for (const element of next) {
        if (isOmitted(element)) bytes += 4;
        else pending.push(element);
      }
    } else if (next !== null && typeof next === 'object') {
      const members = Object.entries(next).filter(([, member]) => !isOmitted(member));
      bytes += 2 + Math.max(0, members.length - 1);
      for (const [name, member] of members) {
        bytes += Buffer.byteLength(JSON.stringify(name)) + 1;
        pending.push(member);
      }
    } else if (!isOmitted(next)) bytes += Buffer.byteLength(JSON.stringify(next));
  }
  return bytes;
}

/** Whether JSON.stringify leaves this member out of an object (and writes `null` for it in an array). */
function isOmitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/** A device's health as stored and shown (`health` of the device resource). */
export type DeviceHealth = NonNullable<Device['health']>;

/** A health report: the `health` object without `updated`, which the service sets (a device's clock is not trusted). */
export type DeviceHealthReport = Omit<DeviceHealth, 'updated'> & { updated?: string };

/** What recording a report wrote, for the write metrics: the presence entry always, the device item sometimes. */
export interface HealthReportOutcome {
  /**
   * Why the device item was written: `health-changed` (the health differs from the stored one, `updated` aside),
   * `connected` (same health, but the device was not CONNECTED, or the heartbeat sweeper had disconnected it since its
   * previous report); undefined when it was not written.
   */
  deviceWrite?: 'health-changed' | 'connected';
}

/** What reportDeviceHealth needs. */
export interface HealthReportDependencies {
  devices: Pick<DeviceRepository, 'get' | 'recordHealth'>;
  presence: Pick<PresenceRepository, 'touch'>;
  /** The heartbeat window, seconds: a device silent longer than this becomes DISCONNECTED. */
  heartbeatSeconds: number;
  /** Current time; injectable for tests. */
  now?: () => Date;
}

const REFUSED =
  'The device token is no longer valid: the device was deleted or its credentials were replaced. Ask the operator for new credentials.';

/**
 * Records the caller's health report. Steps, in this order:
 * 1. activeDevice: one consistent GetItem of the device (401 when it is gone, being deleted, or re-credentialed).
 * 2. The presence entry: `lastSeen` = now and the deadline `sweepAt` = now + heartbeatSeconds (one ~100-byte put).
 *    Written before the device so that a device shown CONNECTED always has a deadline: should the process die between
 *    the two writes, the device simply is not CONNECTED yet (its next report does it), never CONNECTED for ever.
 * 3. The device item, only when the health (its `updated` aside) differs from the stored one, or the device is not
 *    CONNECTED, or the replaced presence entry had no deadline (the sweeper disconnected the device after step 1
 *    read it, or it never reported): one conditional update setting `health` (`updated` = now), `connection`
 *    (CONNECTED, `connectedSince` kept while the device stays connected, else now) and `updated` = now.
 * An unchanged report of a connected device therefore writes only the presence entry: no device write, no stream
 * record, no search index update.
 * @throws ForbiddenError when the caller is not a device token.
 * @throws UnauthorizedError when the device is gone, being deleted or re-credentialed (also when that happens
 *   between steps 1 and 3: the conditional update refuses, nothing is written to the device).
 */
export async function reportDeviceHealth(
  dependencies: HealthReportDependencies,
  principal: Principal,
  report: DeviceHealthReport,
): Promise<HealthReportOutcome> {
  const device = await activeDevice(dependencies.devices, principal);
  const now = (dependencies.now?.() ?? new Date()).getTime();
  const nowIso = new Date(now).toISOString();
  const deadline = new Date(now + dependencies.heartbeatSeconds * 1_000).toISOString();
  const { watched } = await dependencies.presence.touch(device.company, device.id, nowIso, deadline);

  const { updated: _ignored, ...reported } = report;
  const healthChanged = !sameHealth(device.health, reported);
  const stillConnected = device.connection.state === 'CONNECTED' && watched;
  if (!healthChanged && stillConnected) return {};
  const connectedSince = stillConnected ? (device.connection.connectedSince ?? nowIso) : nowIso;
  const outcome = await dependencies.devices.recordHealth(device.company, device.id, device.credential?.id ?? '', {
    health: { ...reported, updated: nowIso },
    connectedSince,
    updated: nowIso,
  });
  if (outcome === 'refused') throw new UnauthorizedError(REFUSED);
  return { deviceWrite: healthChanged ? 'health-changed' : 'connected' };
}

/** Whether the stored health equals the reported one, `updated` aside (members compared whatever their order). */
function sameHealth(stored: DeviceHealth | undefined, reported: Omit<DeviceHealth, 'updated'>): boolean {
  if (stored === undefined) return false;
  const { updated: _updated, ...storedHealth } = stored;
  return isDeepStrictEqual(storedHealth, reported);
}
