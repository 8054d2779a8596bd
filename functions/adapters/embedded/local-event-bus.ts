import { EventEmitter } from 'node:events';
import { appendFile, mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { DeploymentChangedEvent, EventPublisher } from '../../core/ports.js';

/**
 * The local event bus: emits each event in process (`on('DeploymentChanged', …)`) and appends it as one JSON line to
 * `file`, so that tools and tests outside the process can follow events (`tail -f .data/events/events.jsonl`).
 */
export class LocalEventBus extends EventEmitter implements EventPublisher {
  constructor(private readonly file: string) {
    super();
  }

  /** @inheritdoc */
  async publish(events: readonly DeploymentChangedEvent[]): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    await appendFile(this.file, events.map((event) => `${JSON.stringify(event)}\n`).join(''));
    for (const event of events) this.emit(event.type, event);
  }
}
