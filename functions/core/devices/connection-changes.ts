/**
 * A device's connection changes, derived from the devices table's stream (durable first: the heartbeat sweeper's and a
 * report's writes of `connection` are the source): one DeviceConnectionChanged event per change to CONNECTED or
 * DISCONNECTED, its id `{company}#{deviceId}:{state}:{since}`, so a replayed record publishes the same event.
 */
import type { DeviceDocument } from '../search/documents.js';
import type { DeviceConnectionChangedEvent } from '../webhooks/events.js';

/**
 * The event of a device's change, or undefined when its connection state did not change to CONNECTED or DISCONNECTED
 * (or the change has no device after it: deleted, or being deleted). `at` is `connectedSince` or `disconnectedSince`
 * (the change's `updated` when the device has none).
 */
export function connectionChangedEventOf(
  before: DeviceDocument | undefined,
  after: DeviceDocument | undefined,
): DeviceConnectionChangedEvent | undefined {
  if (after === undefined) return undefined;
  const { state } = after.connection;
  if ((state !== 'CONNECTED' && state !== 'DISCONNECTED') || before?.connection.state === state) return undefined;
  const at = (state === 'CONNECTED' ? after.connection.connectedSince : after.connection.disconnectedSince) ?? after.updated;
  return { type: 'DeviceConnectionChanged', company: after.company, deviceId: after.id, serial: after.serial, state, at };
}
