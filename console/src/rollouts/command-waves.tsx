/**
 * A COMMAND rollout's waves: one bar per wave (decoration, hidden from assistive technology: the targets' results on
 * the first line, the final states of the commands queued on the second) and the same numbers as a table (the
 * accessible truth): per wave its size, state, targets that got the command or why not (COMMAND_NOT_ADVERTISED, …), the
 * commands queued, and how many SUCCEEDED, FAILED, EXPIRED or were CANCELLED.
 */
import { count, humanize } from '../format.js';
import { UserText } from '../user-text.js';
import type { Rollout } from './api.js';
import { COMMAND_FINAL_KEYS, COMMANDS_KEY, targetResultKeys } from './command-rollout.js';
import { BarLine } from './waves.js';

/** A target result key's column heading: SUCCESS is the targets whose commands were queued. */
function resultHeading(key: string): string {
  return key === 'SUCCESS' ? 'Targets with the command' : humanize(key);
}

/** The bars of every wave: targets by result over the wave's size, then commands by final state over those queued. */
export function CommandWaveBars({ rollout }: { rollout: Rollout }) {
  const keys = targetResultKeys(rollout);
  return (
    <div class="wave-bars" aria-hidden="true">
      {rollout.waves.map((wave, index) => (
        <div class="wave-bar" key={index}>
          <span class="wave-bar-label">Wave {index + 1}</span>
          <div class="bar">
            <BarLine size={wave.size} parts={keys.map((key) => [key, wave.counts[key] ?? 0])} />
            <BarLine size={wave.counts[COMMANDS_KEY] ?? 0} parts={COMMAND_FINAL_KEYS.map((key) => [key, wave.counts[key] ?? 0])} />
          </div>
        </div>
      ))}
    </div>
  );
}

/** The waves' numbers (absent keys are 0). */
export function CommandWaveTable({ rollout }: { rollout: Rollout }) {
  const results = targetResultKeys(rollout);
  const columns: [string, string][] = [
    ...results.map((key): [string, string] => [key, resultHeading(key)]),
    [COMMANDS_KEY, 'Commands queued'],
    ...COMMAND_FINAL_KEYS.map((key): [string, string] => [key, humanize(key)]),
  ];
  return (
    <table class="waves">
      <caption>
        Waves of rollout <UserText text={rollout.id} />
      </caption>
      <thead>
        <tr>
          <th scope="col">Wave</th>
          <th scope="col">Size</th>
          <th scope="col">State</th>
          {columns.map(([key, heading]) => (
            <th scope="col" key={key} data-key={key}>
              {heading}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rollout.waves.map((wave, index) => (
          <tr key={index}>
            <th scope="row">{index + 1}</th>
            <td>{count(wave.size)}</td>
            <td>{humanize(wave.state)}</td>
            {columns.map(([key]) => (
              <td key={key}>{count(wave.counts[key] ?? 0)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
