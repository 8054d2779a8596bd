import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { DeploymentChangedEvent, EventPublisher } from '../../core/ports.js';

/** EventBridge `Source` of every event this service emits. */
export const EVENT_SOURCE = 'device-scenario-service';

/**
 * EventPublisher on an EventBridge bus: PutEvents in batches of 10 (the API's limit), `DetailType` = event type,
 * `Detail` = the event. Entries EventBridge refuses are retried once, then reported.
 * @throws Error naming how many events could not be published.
 */
export class EventBridgeEventPublisher implements EventPublisher {
  constructor(private readonly client: EventBridgeClient, private readonly eventBusName: string) {}

  /** @inheritdoc */
  async publish(events: readonly DeploymentChangedEvent[]): Promise<void> {
    let failed = 0;
    for (let start = 0; start < events.length; start += 10) {
      let entries = events.slice(start, start + 10).map((event) => ({
        EventBusName: this.eventBusName, Source: EVENT_SOURCE, DetailType: event.type, Detail: JSON.stringify(event), Time: new Date(event.at),
      }));
      for (let attempt = 1; attempt <= 2 && entries.length > 0; attempt += 1) {
        const response = await this.client.send(new PutEventsCommand({ Entries: entries }));
        entries = entries.filter((_, index) => response.Entries?.[index]?.ErrorCode !== undefined);
      }
      failed += entries.length;
    }
    if (failed > 0) throw new Error(`EventBridge refused ${failed} of ${events.length} events.`);
  }
}
