import { type EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import type { AdministrativeChangePublisher } from '../../core/audit/changes.js';
import type { EventPublisher } from '../../core/deployments/ports.js';
import type { BusEvent, BusEventPublisher } from '../../core/webhooks/events.js';
import { type RetryPolicy, retry } from '../retry.js';

/** Entries a PutEvents call refused (throttled or failed inside EventBridge): sent again. */
class RefusedEntriesError extends Error {}

/** Refused entries are sent once more, after 50 to 100 ms (jittered). */
const REFUSED_ENTRIES_RETRY: RetryPolicy = { attempts: 2, minDelayMs: 100, retryable: (error) => error instanceof RefusedEntriesError };

/** EventBridge `Source` of every event this service emits. */
export const EVENT_SOURCE = 'device-scenario-service';

/**
 * EventPublisher on an EventBridge bus: PutEvents in batches of 10 (the API's limit), `DetailType` = event type,
 * `Detail` = the event. Entries EventBridge refuses are retried once (REFUSED_ENTRIES_RETRY), then reported.
 * @throws Error naming how many events could not be published.
 */
export class EventBridgeEventPublisher implements BusEventPublisher, EventPublisher, AdministrativeChangePublisher {
  constructor(
    private readonly client: EventBridgeClient,
    private readonly eventBusName: string,
  ) {}

  /** @inheritdoc */
  async publish(events: readonly BusEvent[]): Promise<void> {
    let failed = 0;
    for (let start = 0; start < events.length; start += 10) {
      let entries = events.slice(start, start + 10).map((event) => ({
        EventBusName: this.eventBusName,
        Source: EVENT_SOURCE,
        DetailType: event.type,
        Detail: JSON.stringify(event),
        Time: new Date(event.at),
      }));
      await retry(async () => {
        const response = await this.client.send(new PutEventsCommand({ Entries: entries }));
        entries = entries.filter((_, index) => response.Entries?.[index]?.ErrorCode !== undefined);
        if (entries.length > 0) throw new RefusedEntriesError(`EventBridge refused ${entries.length} entries.`);
      }, REFUSED_ENTRIES_RETRY).catch((error: unknown) => {
        if (!(error instanceof RefusedEntriesError)) throw error;
      });
      failed += entries.length;
    }
    if (failed > 0) throw new Error(`EventBridge refused ${failed} of ${events.length} events.`);
  }
}
