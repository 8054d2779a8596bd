import { EventEmitter } from 'node:events';
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { AdministrativeChangePublisher } from '../../core/audit/changes.js';
import type { EventPublisher } from '../../core/deployments/ports.js';
import { type BusEvent, type BusEventPublisher, busEventId as eventIdOf } from '../../core/webhooks/events.js';

/**
 * The local event bus: emits each event in process (`on(type, …)` for each BusEvent type: `DeploymentStatusChanged`,
 * `AdministrativeChange`, `RolloutStateChanged`…) and appends it as one JSON line to `file`, so that tools and tests outside the
 * process can follow events (`tail -f .data/events/events.jsonl`). Events are keyed by their id (busEventId: a DEPLOY's or
 * UNDEPLOY's `deploymentId`, a status report's `statusId`, an administrative change's entry `id`…): one already in the
 * file (a stream batch retried after a crash or a failure) is not appended again, so the file holds each change
 * exactly once.
 */
export class LocalEventBus extends EventEmitter implements BusEventPublisher, EventPublisher, AdministrativeChangePublisher {
  private published: Promise<Set<string>> | undefined;
  /** Whether the file ends inside a line (a process killed mid-append): the next append starts a new line first. */
  private tornTail = false;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly file: string) {
    super();
  }

  /** The ids already in the file, read once (a missing file has none; a torn last line is skipped). */
  private publishedIds(): Promise<Set<string>> {
    this.published ??= readFile(this.file, 'utf8').then(
      (text) => {
        this.tornTail = text.length > 0 && !text.endsWith('\n');
        return new Set(
          text.split('\n').flatMap((line) => {
            try {
              const id = eventIdOf(JSON.parse(line) as BusEvent) as unknown;
              return typeof id === 'string' ? [id] : [];
            } catch {
              return [];
            }
          }),
        );
      },
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return new Set<string>();
        throw error;
      },
    );
    return this.published;
  }

  /** @inheritdoc */
  publish(events: readonly BusEvent[]): Promise<void> {
    // One append at a time, so two batches never interleave or both pass the repeat check.
    const done = this.queue.then(async () => {
      const published = await this.publishedIds();
      const fresh = events.filter((event) => !published.has(eventIdOf(event)));
      if (fresh.length === 0) return;
      await mkdir(dirname(this.file), { recursive: true });
      await appendFile(this.file, (this.tornTail ? '\n' : '') + fresh.map((event) => `${JSON.stringify(event)}\n`).join(''));
      this.tornTail = false;
      for (const event of fresh) {
        published.add(eventIdOf(event));
        this.emit(event.type, event);
      }
    });
    this.queue = done.catch(() => undefined);
    return done;
  }
}
