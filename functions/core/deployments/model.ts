/**
 * The stored shapes of the deployment area: active deployments, the device status reports on them, the history
 * lines and the events derived from them.
 */
import type { CommandStateChangedEvent } from '../commands/model.js';

/** What a device reports about one of its active deployments while it installs it. */
export const DEVICE_STATUS_STATES = ['DOWNLOADING', 'INSTALLING', 'INSTALLED', 'FAILED'] as const;

/** One state of DEVICE_STATUS_STATES. */
export type DeviceStatusState = (typeof DEVICE_STATUS_STATES)[number];

/** An active deployment: (company, device, scenario, version) is its identity (docs/contract.md, "Deployments"). */
export interface ActiveDeployment {
  /** ULID of the action that created it. */
  id: string;
  company: string;
  deviceId: string;
  scenarioId: string;
  version: string;
  /** ISO-8601. */
  deployedAt: string;
  /** `sub` of the caller. */
  deployedBy: string;
  note?: string;
  /** The latest status the device reported for it (recordDeviceStatus); absent until the device reports one. */
  deviceStatus?: DeviceStatus;
  /**
   * Set when a rollout made it: the rollout and its wave (0-based), so that the device's INSTALLED or FAILED report
   * counts for that wave (RolloutRepository.recordReport).
   */
  rollout?: { id: string; wave: number };
}

/** A device's latest report on one active deployment, as stored on the slot. */
export interface DeviceStatus {
  /** ULID of the report: its history entry's id, and what tells the stream a new report arrived. */
  id: string;
  state: DeviceStatusState;
  /** The device's free text (bounded by the route), if it sent one. */
  message?: string;
  /** ISO-8601: when the service received the report. */
  updated: string;
}

/** Who undeployed an active deployment, when and why: the UNDEPLOY action recorded on the deployment itself. */
export interface UndeployMark {
  /** ULID of the UNDEPLOY action (= its result item `id`). */
  id: string;
  /** ISO-8601. */
  at: string;
  /** `sub` of the caller. */
  by: string;
  note?: string;
  /**
   * Set when the undeploy was not asked for by a deployment request but follows from another change: `DEVICE_DELETED`
   * (its device was deleted). Its history entry carries it as its `cause`.
   */
  cause?: 'DEVICE_DELETED';
}

/**
 * The stored state of one (company, device, scenario, version): an active deployment, or one just undeployed
 * (`undeploy` set) whose history and event are still to be derived from the table's stream before it is purged.
 * Listings and existence checks treat an undeployed one as absent.
 */
export interface DeploymentSlot extends ActiveDeployment {
  undeploy?: UndeployMark;
  /**
   * Set on a slot a storage migration moved to another key (the key it came from): its appearance under the new key
   * is no deployment change.
   */
  movedFrom?: string;
}

/** One line of the deployment history: every action, successful or not. */
export interface DeploymentHistoryEntry {
  /** Absent on entries stored before status reports existed: every such entry is an action. */
  kind?: 'ACTION';
  /** ULID of the action (= result item `id`). */
  id: string;
  company: string;
  deviceId: string;
  deviceSubId: string | null;
  targetType: string;
  whatType: string;
  scenarioId: string;
  version: string;
  action: 'DEPLOY' | 'UNDEPLOY';
  state: 'SUCCESS' | 'FAILURE';
  cause: string | null;
  /** ISO-8601. */
  at: string;
  by: string;
  note?: string;
}

/**
 * One line of the deployment history recording a device's status report on one of its active deployments (derived
 * from the deployments table's stream when a slot's `deviceStatus.id` changes). Same keys as an action, so the
 * listing's filters (device, scenario, version, time) find it.
 */
export interface DeviceStatusHistoryEntry {
  kind: 'DEVICE_STATUS';
  /** ULID of the report (DeviceStatus.id). */
  id: string;
  company: string;
  deviceId: string;
  deviceSubId: null;
  targetType: 'DEVICE';
  whatType: 'SCENARIO';
  scenarioId: string;
  version: string;
  /** ULID of the active deployment the report is about (its DEPLOY action). */
  deploymentId: string;
  deviceStatus: { state: DeviceStatusState; message?: string };
  /** ISO-8601: when the service received the report. */
  at: string;
  /** The reporting device's OAuth client id (`{company}~{deviceId}`, deviceClientId). */
  by: string;
}

/** Any line of the deployment history. */
export type HistoryEntry = DeploymentHistoryEntry | DeviceStatusHistoryEntry;

/** An active deployment of one device as the device itself pulls it (DeploymentRepository.activeOnDevice). */
export type DeviceSlot = Pick<ActiveDeployment, 'id' | 'scenarioId' | 'version' | 'deployedAt' | 'deviceStatus'>;

/**
 * Emitted for each successful DEPLOY or UNDEPLOY (EventBridge in AWS, an in-process bus locally), derived from the
 * deployments table's stream. `deploymentId` identifies the change: a consumer that sees it twice has seen one change.
 */
export interface DeploymentChangedEvent {
  type: 'DeploymentChanged';
  company: string;
  /** ULID of the action (the result item's `id`). */
  deploymentId: string;
  action: 'DEPLOY' | 'UNDEPLOY';
  deviceId: string;
  scenarioId: string;
  version: string;
  /** ISO-8601. */
  at: string;
  by: string;
  note: string | null;
}

/**
 * Emitted for each status report of a device on one of its active deployments, derived from the deployments table's
 * stream. `statusId` identifies the report: a consumer that sees it twice has seen one report.
 */
export interface DeploymentStatusChangedEvent {
  type: 'DeploymentStatusChanged';
  company: string;
  /** ULID of the report (its history entry's id). */
  statusId: string;
  /** ULID of the active deployment the report is about (its DEPLOY action). */
  deploymentId: string;
  deviceId: string;
  scenarioId: string;
  version: string;
  state: DeviceStatusState;
  message: string | null;
  /** ISO-8601: when the service received the report. */
  at: string;
  /** The reporting device's OAuth client id. */
  by: string;
}

/** Every event the deployment and command stream consumers publish. */
export type DeploymentEvent = DeploymentChangedEvent | DeploymentStatusChangedEvent | CommandStateChangedEvent;
