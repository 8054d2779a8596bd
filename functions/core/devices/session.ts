/**
 * Who a device endpoint is talking to: the device a device token names, checked against the devices table on every
 * call, so that a deleted device or a replaced secret stops its tokens at once rather than when they expire.
 */

import { UnauthorizedError } from '../shared/errors.js';
import { deviceOf, type Principal } from '../shared/principal.js';
import type { StoredDevice } from './model.js';
import type { DeviceRepository } from './ports.js';

/**
 * The stored device the caller's device token acts as (one strongly consistent read).
 * @throws ForbiddenError when the caller is not a device token.
 * @throws UnauthorizedError (`invalid_token`) when the device no longer exists, is being deleted, or its
 *   credential was replaced since the token was issued.
 */
export async function activeDevice(devices: Pick<DeviceRepository, 'get'>, principal: Principal): Promise<StoredDevice> {
  const identity = deviceOf(principal);
  const device = await devices.get(identity.company, identity.deviceId);
  if (device === undefined || device.deleting === true || device.credential?.id !== identity.credentialId) {
    throw new UnauthorizedError(
      'The device token is no longer valid: the device was deleted or its credentials were replaced. Ask the operator for new credentials.',
    );
  }
  return device;
}
