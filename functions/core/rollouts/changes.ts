/**
 * What follows a rollout's change of state, derived from the rollouts table's stream: a RolloutStateChanged bus event
 * when it paused (on its wave's failures, or by an operator) or completed, which webhooks carry as rollout.paused and
 * rollout.completed. The event is read from the rollout's own newest PAUSED or COMPLETED event, written by the same
 * conditional write as the transition, so a record seen twice gives the same event, with the same id.
 */
import type { BusEventPublisher, RolloutStateChangedEvent } from '../webhooks/events.js';
import type { RolloutEvent, StoredRollout } from './model.js';

/** The rollout states a RolloutStateChanged event is published for. */
const ANNOUNCED_STATES = ['PAUSED', 'COMPLETED'] as const;

type AnnouncedState = (typeof ANNOUNCED_STATES)[number];

function isAnnounced(state: StoredRollout['state']): state is AnnouncedState {
  return (ANNOUNCED_STATES as readonly string[]).includes(state);
}

/** The rollout's newest event of `type`, if it recorded one (a rollout stored before events has none). */
function newestEvent(rollout: StoredRollout, type: AnnouncedState): RolloutEvent | undefined {
  return rollout.events?.findLast((event) => event.type === type);
}

/**
 * The event of a change between two images of a rollout item, or undefined when its state did not become PAUSED or
 * COMPLETED (unchanged, another state, or the item deleted). `at`, `by`, `reason` and `wave` come from the rollout's
 * newest event of that state; a rollout without one (stored before events were recorded) gives its `updated`.
 */
export function rolloutStateChangeOf(
  oldImage: StoredRollout | undefined,
  newImage: StoredRollout | undefined,
): RolloutStateChangedEvent | undefined {
  if (newImage === undefined || oldImage?.state === newImage.state || !isAnnounced(newImage.state)) return undefined;
  const state = newImage.state;
  const event = newestEvent(newImage, state);
  return {
    type: 'RolloutStateChanged',
    company: newImage.company,
    rolloutId: newImage.id,
    action: newImage.action,
    ...(newImage.what === undefined ? {} : { what: { type: 'SCENARIO', id: newImage.what.id, subId: newImage.what.subId } }),
    ...(newImage.command === undefined ? {} : { command: newImage.command.command }),
    state,
    at: event?.at ?? newImage.updated,
    ...(event?.wave === undefined || state !== 'PAUSED' ? {} : { wave: event.wave }),
    ...(event?.by === undefined ? {} : { by: event.by }),
    ...(event?.reason === undefined ? {} : { reason: event.reason }),
  };
}

/**
 * Publishes the events of a batch's changes, in order (nothing when there are none).
 * @throws when the bus refuses them (the stream consumer then retries the batch; the bus drops or tolerates repeats).
 */
export async function publishRolloutStateChanges(
  ports: { events: BusEventPublisher },
  events: readonly RolloutStateChangedEvent[],
): Promise<void> {
  if (events.length > 0) await ports.events.publish(events);
}
