/**
 * What webhooks carry, derived from the service's bus events (durable first: every bus event comes from a table's
 * stream): which bus event is which webhook event type, its id and its `data` (docs/webhooks.md, "Event types").
 */
import type { AdministrativeChangeEvent } from '../audit/changes.js';
import type { CommandStateChangedEvent } from '../commands/model.js';
import { deploymentEventId } from '../deployments/changes.js';
import type { DeploymentEvent, DeploymentStatusChangedEvent } from '../deployments/model.js';
import type { WebhookEvent, WebhookEventType } from './model.js';

/**
 * A device's connection changed (CONNECTED ⇄ DISCONNECTED), derived from the devices table's stream. Its id is
 * `{company}#{deviceId}:{state}:{since}`: the same change seen twice has one id.
 */
export interface DeviceConnectionChangedEvent {
  type: 'DeviceConnectionChanged';
  company: string;
  deviceId: string;
  serial: string;
  state: 'CONNECTED' | 'DISCONNECTED';
  /** ISO-8601: connection.connectedSince or disconnectedSince. */
  at: string;
}

/**
 * A rollout paused or completed, derived from the rollouts table's stream (the rollout item's newest PAUSED or
 * COMPLETED event: core/rollouts/changes.ts). Its id is `{rolloutId}:{state}:{at}`: a rollout paused twice has two.
 * A rollout has no name: it is told by what it does (`what` or `command`).
 */
export interface RolloutStateChangedEvent {
  type: 'RolloutStateChanged';
  company: string;
  rolloutId: string;
  action: 'DEPLOY' | 'UNDEPLOY' | 'COMMAND';
  /** DEPLOY and UNDEPLOY: the scenario version. */
  what?: { type: 'SCENARIO'; id: string; subId: string };
  /** COMMAND: the command's name. */
  command?: string;
  state: 'PAUSED' | 'COMPLETED';
  /** ISO-8601: when the transition was written. */
  at: string;
  /** The wave (1-based) it paused in on failures. */
  wave?: number;
  /** Who paused it (a user's subject), absent when it paused by itself. */
  by?: string;
  /** Why it paused (the wave's failures), when it did by itself. */
  reason?: string;
}

/**
 * An alert raised or resolved, derived from the alerts table's stream. Its id is `{alertId}:{state}`.
 */
export interface AlertChangedEvent {
  type: 'AlertChanged';
  company: string;
  alertId: string;
  ruleId: string;
  ruleName: string;
  state: 'OPEN' | 'RESOLVED';
  target: { type: 'DEVICE'; id: string; subId?: string };
  /** ISO-8601: raisedAt (OPEN) or resolvedAt (RESOLVED). */
  at: string;
  /** What held (or stopped holding), for a person. */
  detail: string;
}

/** Every event the service's bus carries (EventBridge `detail-type` = `type`). */
export type BusEvent =
  | DeploymentEvent
  | AdministrativeChangeEvent
  | DeviceConnectionChangedEvent
  | RolloutStateChangedEvent
  | AlertChangedEvent;

/**
 * The service's event bus, for every bus event (EventBridge on AWS, the local bus locally): the EventPublisher of
 * deployments and the AdministrativeChangePublisher are narrower views of it.
 */
export interface BusEventPublisher {
  /**
   * Publishes events in order. Publishing an event published before (the same busEventId) is allowed (a stream
   * consumer retries whole batches); the local bus drops such repeats, EventBridge delivers at least once.
   * @throws when the bus refuses them (the stream consumer then retries the batch).
   */
  publish(events: readonly BusEvent[]): Promise<void>;
}

/** The bus event types webhooks are derived from (the EventBridge rule's `detail-type` list). */
export const WEBHOOK_SOURCE_EVENT_TYPES = [
  'DeploymentStatusChanged',
  'DeviceConnectionChanged',
  'RolloutStateChanged',
  'CommandStateChanged',
  'AlertChanged',
] as const satisfies readonly BusEvent['type'][];

/** What identifies a bus event: the same change delivered twice (a retried stream batch) has the same id. */
export function busEventId(event: BusEvent): string {
  switch (event.type) {
    case 'AdministrativeChange':
      return event.id;
    case 'DeviceConnectionChanged':
      return `${event.company}#${event.deviceId}:${event.state}:${event.at}`;
    case 'RolloutStateChanged':
      return `${event.rolloutId}:${event.state}:${event.at}`;
    case 'AlertChanged':
      return `${event.alertId}:${event.state}`;
    default:
      return deploymentEventId(event);
  }
}

/**
 * The webhook event a bus event is, or undefined when webhooks carry none: a device's INSTALLED report is
 * `deployment.succeeded`, FAILED `deployment.failed` (DOWNLOADING and INSTALLING are none); a command's SUCCEEDED,
 * FAILED and EXPIRED are `command.*` (other states none); deployment actions and administrative changes are none.
 * Its `data` is documented, with an example of each type, in docs/webhooks.md ("Event types").
 */
export function webhookEventOf(event: BusEvent): WebhookEvent | undefined {
  if (event.type === 'AdministrativeChange') return undefined;
  const carried = carriedOf(event);
  if (carried === undefined) return undefined;
  return { company: event.company, eventId: busEventId(event), timestamp: event.at, ...carried };
}

/** A webhook event's type and data. */
type Carried = Pick<WebhookEvent, 'type' | 'data'>;

/** The webhook event type of each command state webhooks carry. */
const COMMAND_EVENT_TYPES: Readonly<Partial<Record<CommandStateChangedEvent['state'], WebhookEventType>>> = {
  SUCCEEDED: 'command.succeeded',
  FAILED: 'command.failed',
  EXPIRED: 'command.expired',
};

/** What webhooks carry of a bus event (but an administrative change), or undefined for none. */
function carriedOf(event: Exclude<BusEvent, AdministrativeChangeEvent>): Carried | undefined {
  switch (event.type) {
    case 'DeploymentStatusChanged':
      return deploymentCarried(event);
    case 'DeviceConnectionChanged':
      return {
        type: event.state === 'CONNECTED' ? 'device.connected' : 'device.disconnected',
        data: { deviceId: event.deviceId, serial: event.serial, state: event.state, since: event.at },
      };
    case 'RolloutStateChanged':
      return { type: event.state === 'PAUSED' ? 'rollout.paused' : 'rollout.completed', data: rolloutData(event) };
    case 'CommandStateChanged':
      return commandCarried(event);
    case 'AlertChanged': {
      const { alertId, ruleId, ruleName, state, target, detail } = event;
      return { type: state === 'OPEN' ? 'alert.raised' : 'alert.resolved', data: { alertId, ruleId, ruleName, state, target, detail } };
    }
    default:
      return undefined;
  }
}

/** deployment.succeeded (INSTALLED) or deployment.failed (FAILED); none for a report still in progress. */
function deploymentCarried(event: DeploymentStatusChangedEvent): Carried | undefined {
  if (event.state !== 'INSTALLED' && event.state !== 'FAILED') return undefined;
  const { deploymentId, deviceId, scenarioId, version, message, statusId } = event;
  return {
    type: event.state === 'INSTALLED' ? 'deployment.succeeded' : 'deployment.failed',
    data: {
      deploymentId,
      statusId,
      target: { type: 'DEVICE', id: deviceId },
      what: { type: 'SCENARIO', id: scenarioId, subId: version },
      state: event.state,
      message,
    },
  };
}

/** command.succeeded, command.failed or command.expired; none for a command not final, or cancelled. */
function commandCarried(event: CommandStateChangedEvent): Carried | undefined {
  const type = COMMAND_EVENT_TYPES[event.state];
  if (type === undefined) return undefined;
  const { commandId, deviceId, subId, command, state, message, rolloutId, by } = event;
  return { type, data: { commandId, target: { type: 'DEVICE', id: deviceId, subId }, command, state, message, rolloutId, by } };
}

/** The `data` of rollout.paused and rollout.completed: the event without its bus fields, absent members left out. */
function rolloutData(event: RolloutStateChangedEvent): Record<string, unknown> {
  const { rolloutId, action, what, command, state, wave, by, reason } = event;
  const data = { rolloutId, action, what, command, state, wave, by, reason };
  return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== undefined));
}
