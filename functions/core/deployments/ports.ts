/** Ports of the deployment area: active deployments with their history, and the event bus. */
import type { Page } from '../shared/paging.js';
import type { ActiveDeployment, DeploymentEvent, DeviceSlot, DeviceStatus, HistoryEntry, UndeployMark } from './model.js';

/** Active deployments and history (deployments table). */
export interface DeploymentRepository {
  /**
   * Creates the active deployment only if no deployment with the same identity is active (one conditional write,
   * which replaces an undeployed slot): of two racing identical calls exactly one returns `activated`. Its history
   * entry and event are derived from the table's stream (DeploymentSlot images), not written here.
   */
  activate(deployment: ActiveDeployment): Promise<'activated' | 'already-active'>;
  /**
   * Marks the active deployment undeployed with `undeploy` only if it is active (one conditional write): of two
   * racing calls one wins. The slot stops counting as active at once; its history entry and event are derived from
   * the table's stream, which then purges it (purgeUndeployed).
   */
  deactivate(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    undeploy: UndeployMark,
  ): Promise<'deactivated' | 'already-inactive'>;
  /**
   * Writes history entries with batched, idempotent puts keyed by the entry id (writing one twice leaves one entry).
   * @throws Error when some entries could not be written after retries.
   */
  recordHistory(entries: readonly HistoryEntry[]): Promise<void>;
  /**
   * Deletes undeployed slots whose UNDEPLOY is `undeployId` (conditional deletes: a slot deployed again since, or
   * already purged, is left alone).
   */
  purgeUndeployed(
    slots: readonly (Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'> & { undeployId: string })[],
  ): Promise<void>;
  /**
   * Lists active deployments of one device, or of every device when `deviceId` is undefined, ordered by
   * (device, scenario, version). @throws BadRequestError on a cursor this adapter did not issue.
   */
  listActive(companyId: string, deviceId: string | undefined, limit: number, cursor: string | undefined): Promise<Page<ActiveDeployment>>;
  /**
   * Every active deployment of one device (all pages of one strongly consistent Query on the device's slots), with
   * only what the device's desired state needs, ordered by (scenario, version).
   */
  activeOnDevice(companyId: string, deviceId: string): Promise<DeviceSlot[]>;
  /**
   * Sets `status` as the latest report on the active deployment (one conditional write: the slot exists and is not
   * undeployed). Its history entry and event are derived from the table's stream.
   * @returns false when no such deployment is active (nothing written).
   */
  recordDeviceStatus(
    identity: Pick<ActiveDeployment, 'company' | 'deviceId' | 'scenarioId' | 'version'>,
    status: DeviceStatus,
  ): Promise<boolean>;
  /** Returns which of `identities` are active, as `deviceId#scenarioId#version` strings, with batched reads. */
  activeAmong(
    companyId: string,
    identities: readonly Pick<ActiveDeployment, 'deviceId' | 'scenarioId' | 'version'>[],
  ): Promise<Set<string>>;
}

/** Publishes domain events so integrators need not poll. */
export interface EventPublisher {
  /**
   * Publishes events in order. Publishing an event published before (the same `deploymentEventId`) is allowed (the
   * stream consumer retries whole batches); the local bus drops such repeats, EventBridge delivers at least once.
   * @throws when the bus refuses them (the stream consumer then retries the batch).
   */
  publish(events: readonly DeploymentEvent[]): Promise<void>;
}
