/**
 * A rollout's waves: one stacked bar per wave (decoration, hidden from assistive technology) and the same numbers as
 * a table (the accessible truth). Results are SUCCESS or a failure cause; reports are INSTALLED or FAILED.
 */
import { count, humanize } from '../format.js';
import { UserText } from '../user-text.js';
import type { Rollout } from './api.js';
import { REPORT_KEYS } from './progress.js';

type Wave = Rollout['waves'][number];

/** The result keys (SUCCESS first, then failure causes, sorted) that any wave counts. */
export function resultKeys(waves: Wave[]): string[] {
  const keys = new Set<string>();
  for (const wave of waves)
    for (const key of Object.keys(wave.counts)) if (!(REPORT_KEYS as readonly string[]).includes(key)) keys.add(key);
  return [...keys].sort((a, b) => (a === 'SUCCESS' ? -1 : b === 'SUCCESS' ? 1 : a.localeCompare(b)));
}

/**
 * The CSS class of a bar segment for a count key: SUCCESS, a failure cause, INSTALLED, FAILED (a report or a command),
 * a command SUCCEEDED or CANCELLED, or not yet.
 */
function segmentClass(key: string): string {
  if (key === 'SUCCESS' || key === 'INSTALLED' || key === 'SUCCEEDED') return 'segment segment-ok';
  if (key === 'FAILED') return 'segment segment-failed';
  if (key === 'ALREADY_DEPLOYED' || key === 'CANCELLED') return 'segment segment-neutral';
  if (key === '') return 'segment segment-none';
  return 'segment segment-cause';
}

/** One line of a bar: segments whose widths are their share of `size` (set through CSSOM, not an attribute). */
export function BarLine({ size, parts }: { size: number; parts: [string, number][] }) {
  const used = parts.reduce((sum, [, value]) => sum + value, 0);
  const all: [string, number][] = [...parts, ['', Math.max(0, size - used)]];
  return (
    <div class="bar-line">
      {all
        .filter(([, value]) => value > 0)
        .map(([key, value]) => (
          <div key={key} class={segmentClass(key)} style={{ width: `${(100 * value) / Math.max(1, size)}%` }} />
        ))}
    </div>
  );
}

/** The bars of every wave: results on the first line, reports on the second. */
export function WaveBars({ rollout }: { rollout: Rollout }) {
  const keys = resultKeys(rollout.waves);
  return (
    <div class="wave-bars" aria-hidden="true">
      {rollout.waves.map((wave, index) => (
        <div class="wave-bar" key={index}>
          <span class="wave-bar-label">Wave {index + 1}</span>
          <div class="bar">
            <BarLine size={wave.size} parts={keys.map((key) => [key, wave.counts[key] ?? 0])} />
            <BarLine size={wave.size} parts={REPORT_KEYS.map((key) => [key, wave.counts[key] ?? 0])} />
          </div>
        </div>
      ))}
    </div>
  );
}

/** The waves' numbers: size, state, each result key, and the INSTALLED and FAILED reports (absent keys are 0). */
export function WaveTable({ rollout }: { rollout: Rollout }) {
  const keys = [...resultKeys(rollout.waves), ...REPORT_KEYS];
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
          {keys.map((key) => (
            <th scope="col" key={key} data-key={key}>
              {REPORT_KEYS.includes(key as 'FAILED') ? `Reported ${key.toLowerCase()}` : humanize(key)}
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
            {keys.map((key) => (
              <td key={key}>{count(wave.counts[key] ?? 0)}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}
