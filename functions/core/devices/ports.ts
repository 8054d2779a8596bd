/** Ports of the device area: device records, device token signing and the presence (heartbeat) records. */

import type { ClientTokenClaims } from '../clients/model.js';
import type { Device, DeviceCredential, StoredDevice } from './model.js';

/** Device records (devices table). */
export interface DeviceRepository {
  /**
   * Returns the ids among `deviceIds` that exist in `companyId`, using batched reads. A device being deleted
   * (`deleting`) counts as absent.
   */
  existing(companyId: string, deviceIds: readonly string[]): Promise<Set<string>>;
  /** Writes devices unconditionally (seeding). Feeds the search index through the table's stream. */
  put(devices: readonly Device[]): Promise<void>;
  /** One device as stored (credential and `deleting` included), or undefined. A strongly consistent read. */
  get(companyId: string, deviceId: string): Promise<StoredDevice | undefined>;
  /**
   * Records a device's health report: one conditional update setting `health`, `connection` (CONNECTED since
   * `connectedSince`) and `updated`, only if the device exists, is not being deleted and still has the credential
   * `credentialId`. Feeds the search index through the table's stream.
   * @returns `recorded`, or `refused` when the condition failed (nothing written).
   */
  recordHealth(
    companyId: string,
    deviceId: string,
    credentialId: string,
    report: { health: NonNullable<Device['health']>; connectedSince: string; updated: string },
  ): Promise<'recorded' | 'refused'>;
  /**
   * Registers a new device (one conditional write: only if no device with its id exists in its company, deleting or
   * not). @returns false when one exists.
   */
  create(device: Device): Promise<boolean>;
  /**
   * Sets a device's static fields and `updated` (one conditional write: only if it exists and is not being deleted);
   * health, connection and credential are left as they are. A member of `fields` left undefined is left as stored.
   * @returns the device as stored afterwards, or undefined when it is absent or being deleted.
   */
  update(companyId: string, deviceId: string, fields: DeviceStaticFields, updated: string): Promise<StoredDevice | undefined>;
  /**
   * Replaces the device's credential (one conditional write: only if it exists and is not being deleted), so that
   * every earlier secret and the tokens issued for it stop working. @returns false when absent or being deleted.
   */
  setCredential(companyId: string, deviceId: string, credential: DeviceCredential): Promise<boolean>;
  /**
   * Sets `deleting` (one conditional write: only if it exists; already deleting is fine, so a retried delete
   * continues). From then on the device counts as absent everywhere. @returns false when absent.
   */
  markDeleting(companyId: string, deviceId: string): Promise<boolean>;
  /** Deletes the device item (the last step of a delete); an absent one is ignored. */
  remove(companyId: string, deviceId: string): Promise<void>;
  /**
   * Stores `tag` as the device's desired state version (StoredDevice.desiredState) with the next generation, only if
   * the stored one still has generation `expectedGeneration` (undefined: only if none is stored): one conditional
   * write, a compare-and-set, so that of writers that read the same generation exactly one wins. Never creates a
   * device. Feeds the devices table's stream (its search document does not change).
   * @returns `written`; `conflict` when the stored generation is another (read again); `absent` when no device.
   */
  setDesiredState(
    companyId: string,
    deviceId: string,
    tag: string,
    expectedGeneration: number | undefined,
  ): Promise<'written' | 'conflict' | 'absent'>;
}

/** The fields of a device its operator sets; the rest is the device's own report. */
export type DeviceStaticFields = Partial<Pick<Device, 'serial' | 'location' | 'geoLocation'>>;

/**
 * The claims of a device token (client credentials grant) that the signer does not add itself: the device, its
 * company, DEVICE_SCOPE, the OAuth client id and the credential id (DEVICE_TOKEN_CLAIMS).
 */
export interface DeviceTokenClaims {
  /** The device id. */
  sub: string;
  /** The device's one company. */
  companies: [string];
  /** DEVICE_SCOPE. */
  scope: string;
  /** deviceClientId(company, deviceId). */
  client_id: string;
  /** ULID of the credential the token is issued for. */
  cred: string;
}

/**
 * Signs device tokens, and API clients' tokens (ClientTokenClaims), with the issuer's key (the local issuer's key
 * locally, a KMS key on AWS).
 */
export interface DeviceTokenSigner {
  /**
   * A compact JWS (JWT) carrying `claims` plus `iss`, `aud`, `iat`, `nbf` (= iat), `exp` (= iat + lifetimeSeconds)
   * and a fresh `jti`, signed with an algorithm the token verifiers accept (ES256, RS256 or EdDSA) and the key's `kid`.
   */
  sign(claims: DeviceTokenClaims | ClientTokenClaims, lifetimeSeconds: number): Promise<string>;
}

/** A connected device's presence entry whose heartbeat deadline has passed (presence table, `sweep` index). */
export interface OverduePresence {
  company: string;
  deviceId: string;
  /** ISO-8601: the last report's time. */
  lastSeen: string;
  /** ISO-8601: `lastSeen` + the heartbeat window, as read from the index. */
  sweepAt: string;
}

/**
 * What disconnecting an overdue device did: `disconnected` (it was CONNECTED, now DISCONNECTED), `released` (the
 * device is gone, being deleted or not CONNECTED: only the presence entry left the sweep index), `superseded` (a
 * report moved its deadline since the index was read: nothing changed).
 */
export type DisconnectOutcome = 'disconnected' | 'released' | 'superseded';

/**
 * Devices' last reports (presence table): a small item per device, written by every health report so that a report
 * that changes nothing searchable never writes the device item; while the device counts as connected it carries its
 * heartbeat deadline in the sparse `sweep` index.
 */
export interface PresenceRepository {
  /**
   * Records a report (one put of ~100 bytes): `lastSeen` and the deadline `sweepAt` (ISO-8601 both).
   * @returns `watched`: whether the entry replaced carried a deadline, i.e. the heartbeat sweeper had not disconnected
   *   the device (nor had it never reported) since its previous report.
   */
  touch(company: string, deviceId: string, lastSeen: string, sweepAt: string): Promise<{ watched: boolean }>;
  /** Entries whose `sweepAt` is at or before `now` (ISO-8601), at most `limit`, by index queries (no scan), oldest first per shard. */
  overdue(now: string, limit: number): Promise<OverduePresence[]>;
  /**
   * Disconnects an overdue device in one transaction: the entry leaves the sweep index only if its `sweepAt` is still
   * `entry.sweepAt`, and the device becomes DISCONNECTED (since `disconnectedSince`, `updated` = `updated`) only if it
   * is CONNECTED and not being deleted. When only the device's condition fails, the entry still leaves the index
   * (conditionally). See DisconnectOutcome.
   */
  disconnect(entry: OverduePresence, disconnectedSince: string, updated: string): Promise<DisconnectOutcome>;
  /** Deletes a device's entry (device deletion); an absent one is ignored. */
  forget(company: string, deviceId: string): Promise<void>;
}
