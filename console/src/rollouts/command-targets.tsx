/**
 * A COMMAND rollout's targets (`GET …/rollouts/{rolloutId}/targets`): each device with its wave, whether it got the
 * command (or why not), and each command queued on it with its sub-device, state and the device's message. Filtered by
 * the listing's own `commandState` or `state` (kept in the page's URL, as the API names them), a page at a time with
 * "Show more targets". Read when the section shows and again when a wave's state or the failure figures change, not on
 * every poll of the rollout.
 */

import { State } from '../device/facts.js';
import { dateTime, humanize } from '../format.js';
import { usePagedListing } from '../paged-listing.js';
import { ListingStatus, ShowMore } from '../paged-listing-view.js';
import { here, hrefOf, navigate } from '../router.js';
import { problemText } from '../session.js';
import { UserText } from '../user-text.js';
import { type Rollout, type RolloutTarget, readTargetsPage, type TargetsFilter } from './api.js';
import { commandFailureKey } from './command-rollout.js';

/** Targets one page shows. */
const TARGETS_PAGE = 50;

/** The choices of the filter: the URL's parameter and value (none: every target), and their words. */
const CHOICES: readonly { param?: 'commandState' | 'state'; value: string; label: string }[] = [
  { value: '', label: 'Every target' },
  { param: 'commandState', value: 'FAILED', label: 'With a command that failed' },
  { param: 'commandState', value: 'EXPIRED', label: 'With a command that expired' },
  { param: 'commandState', value: 'SUCCEEDED', label: 'With a command that succeeded' },
  { param: 'commandState', value: 'QUEUED', label: 'With a command queued' },
  { param: 'commandState', value: 'DELIVERED', label: 'With a command delivered' },
  { param: 'commandState', value: 'CANCELLED', label: 'With a command cancelled' },
  { param: 'state', value: 'FAILURE', label: 'That got no command' },
];

/** The choice the URL's query names (the first choice when it names none). */
function choiceOf(query: URLSearchParams): (typeof CHOICES)[number] {
  return (
    CHOICES.find((choice) => choice.param !== undefined && query.get(choice.param) === choice.value) ??
    (CHOICES[0] as (typeof CHOICES)[number])
  );
}

/** A target's result in words: its commands queued, why it got none, or that its wave has not reached it. */
function resultText(result: RolloutTarget['result']): string {
  if (result.state === 'SUCCESS') return 'Command queued';
  if (result.state === 'FAILURE') return humanize(result.cause ?? 'UNKNOWN');
  return humanize(result.state);
}

/** The commands queued on a target: sub-device, state, the device's message, when it last changed. */
function TargetCommands({ target }: { target: RolloutTarget }) {
  const commands = target.commands ?? [];
  if (commands.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="target-commands">
      {commands.map((command) => (
        <li key={command.id}>
          <span class="mono">
            <UserText text={command.subId} />
          </span>
          : <State value={command.state} />
          {command.message === undefined ? null : (
            <>
              {' — '}
              <UserText text={command.message} />
            </>
          )}{' '}
          <span class="muted">
            (<time dateTime={command.updated}>{dateTime(command.updated)}</time>)
          </span>
        </li>
      ))}
    </ul>
  );
}

/** The table of the targets read so far. */
function TargetsTable({ company, rollout, items, label }: { company: string; rollout: Rollout; items: RolloutTarget[]; label: string }) {
  if (items.length === 0) return <p>No target matches.</p>;
  return (
    <table class="command-targets">
      <caption>
        Targets of rollout <UserText text={rollout.id} />: {label.toLowerCase()} ({items.length} shown)
      </caption>
      <thead>
        <tr>
          <th scope="col">Device</th>
          <th scope="col">Wave</th>
          <th scope="col">Result</th>
          <th scope="col">Commands</th>
        </tr>
      </thead>
      <tbody>
        {items.map((target) => (
          <tr key={target.deviceId} data-device-id={target.deviceId}>
            <td>
              <a class="mono" href={hrefOf(`/devices/${encodeURIComponent(company)}/${encodeURIComponent(target.deviceId)}`)}>
                <UserText text={target.deviceId} />
              </a>
            </td>
            <td>{target.wave}</td>
            <td>{resultText(target.result)}</td>
            <td>
              <TargetCommands target={target} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The section (see the module comment). */
export function CommandTargets({ company, rollout }: { company: string; rollout: Rollout }) {
  const query = here.value.query;
  const choice = choiceOf(query);
  const filter: TargetsFilter = choice.param === undefined ? {} : { [choice.param]: choice.value };
  const changes = `${rollout.state} ${rollout.waves.map((wave) => wave.state).join(',')} ${commandFailureKey(rollout)}`;
  const listing = usePagedListing<RolloutTarget, string>(
    [company, rollout.id, choice.value, changes],
    true,
    async (cursor) => {
      const answer = await readTargetsPage(company, rollout.id, filter, cursor, TARGETS_PAGE);
      return 'data' in answer ? answer.data : { failure: answer.error };
    },
    () => problemText(undefined),
  );
  const choose = (value: string) => {
    const picked = CHOICES.find((each) => each.value === value);
    const next = new URLSearchParams();
    if (picked?.param !== undefined) next.set(picked.param, picked.value);
    navigate(here.value.path, next);
  };
  return (
    <section aria-labelledby="targets-title">
      <h2 id="targets-title">Targets</h2>
      <label class="compose-field">
        Show the targets
        <select value={choice.value} onChange={(event) => choose((event.currentTarget as HTMLSelectElement).value)}>
          {CHOICES.map((each) => (
            <option key={each.value} value={each.value}>
              {each.label}
            </option>
          ))}
        </select>
      </label>
      <ListingStatus listing={listing} what="targets" one="target" />
      {listing.items.value === undefined ? null : (
        <TargetsTable company={company} rollout={rollout} items={listing.items.value} label={choice.label} />
      )}
      <ShowMore listing={listing} what="targets" />
    </section>
  );
}
