/** The event bus of the composition root: EventBridge on AWS, the local bus appending to a file locally. */
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgeEventPublisher } from '../../adapters/aws/eventbridge-event-publisher.js';
import { LocalEventBus } from '../../adapters/embedded/local-event-bus.js';
import type { AdministrativeChangePublisher } from '../../core/audit/changes.js';
import type { EventPublisher } from '../../core/deployments/ports.js';
import type { BusEventPublisher } from '../../core/webhooks/events.js';
import { eventsConfig } from '../config.js';
import { traced } from '../observability.js';

let publisher: (BusEventPublisher & EventPublisher & AdministrativeChangePublisher) | undefined;

/**
 * The event bus for every bus event (deployments, commands, administrative changes, connections, rollouts, alerts): EventBridge when `EVENT_BUS_NAME` is set (AWS), the local bus
 * appending to `LOCAL_EVENTS_FILE` otherwise (local runtime).
 * @throws EnvironmentError naming EVENT_BUS_NAME when neither variable is set.
 */
export function eventPublisher(): BusEventPublisher & EventPublisher & AdministrativeChangePublisher {
  if (publisher === undefined) {
    const config = eventsConfig();
    publisher =
      'busName' in config
        ? new EventBridgeEventPublisher(traced(new EventBridgeClient({})), config.busName)
        : new LocalEventBus(config.localFile);
  }
  return publisher;
}
