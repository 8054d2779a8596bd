/**
 * What the rollout unit tests share: a work queue that keeps what is sent (for the test to deliver, or to fail once),
 * and a scenario repository in which every version asked about exists.
 */
import type { RolloutQueueMessage, RolloutWorkMessage } from '../../functions/core/rollouts/model.js';
import type { RolloutRepository, WorkQueue } from '../../functions/core/rollouts/ports.js';
import type { ScenarioRepository } from '../../functions/core/scenarios/ports.js';

/**
 * A queue that keeps what is sent, in order; `failNext` makes the next send throw (an SQS outage) and nothing kept.
 * `Message` is what the test reads back: chunks only (the default), or cancels too (RolloutQueueMessage).
 */
export class RecordingQueue<Message extends RolloutQueueMessage = RolloutWorkMessage> implements WorkQueue {
  readonly sent: Message[] = [];
  failNext = false;
  async send(messages: readonly RolloutQueueMessage[]): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw new Error('simulated SQS outage');
    }
    this.sent.push(...(messages as Message[]));
  }
}

/** Scenario versions as the rollout use cases ask for them: every one exists. */
export const everyVersionExists = {
  existingVersions: async (_company: string, references: readonly { scenarioId: string; version: string }[]) =>
    new Set(references.map((ref) => `${ref.scenarioId}#${ref.version}`)),
} as unknown as ScenarioRepository;

/**
 * `rollouts` whose `get` answers only once `readers` calls have read, so that that many racing sweepers all read the
 * rollout before any of them writes (each then sees the version the others saw).
 */
export function readingTogether(rollouts: RolloutRepository, readers = 2): RolloutRepository {
  let arrived = 0;
  let release: () => void = () => undefined;
  const allRead = new Promise<void>((resolve) => {
    release = resolve;
  });
  return Object.assign(Object.create(rollouts) as RolloutRepository, {
    get: async (company: string, rolloutId: string) => {
      const read = await rollouts.get(company, rolloutId);
      arrived += 1;
      if (arrived === readers) release();
      await allRead;
      return read;
    },
  });
}
