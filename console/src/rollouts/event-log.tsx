/**
 * A rollout's event log (its `events`, oldest first): when each transition happened and what it was, in words
 * shared with the CLI (client/rollout-events.ts). It shows the rollout the page already polls: no request of its own.
 */
import { describeRolloutEvent, eventLogLines } from '../../../client/rollout-events.js';
import { count, dateTime } from '../format.js';
import { UserText } from '../user-text.js';
import type { Rollout } from './api.js';

/**
 * The "Event log" section: an ordered list of the rollout's transitions, each with its local time; where the service
 * dropped events to bound the log, one item says how many.
 */
export function EventLog({ rollout }: { rollout: Rollout }) {
  const lines = eventLogLines(rollout);
  return (
    <section aria-labelledby="event-log-title">
      <h2 id="event-log-title">Event log</h2>
      {lines.length === 0 ? (
        <p class="muted">No event recorded: this rollout was created before its events were recorded.</p>
      ) : (
        <ol class="event-log">
          {lines.map((line, index) =>
            line.kind === 'dropped' ? (
              <li key={`dropped-${index}`} class="muted">
                … {count(line.count)} {line.count === 1 ? 'event' : 'events'} not kept
              </li>
            ) : (
              <li key={`${line.event.at}-${index}`}>
                <time class="event-time" dateTime={line.event.at}>
                  {dateTime(line.event.at)}
                </time>{' '}
                {/* Its words hold who acted and why a rollout paused: a UserText. */}
                <span class="event-what">
                  <UserText text={describeRolloutEvent(line.event, { action: rollout.action, time: (iso) => dateTime(iso) })} />
                </span>
              </li>
            ),
          )}
        </ol>
      )}
    </section>
  );
}
