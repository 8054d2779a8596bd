/**
 * The rollout composer's pure parts: which company a search's rollout is for, the search as a rollout's
 * `targets.query`, the wave sizes typed by the user and how they split the targets, the preview's breakdown of the
 * targets by facet field, and a datetime-local value as ISO-8601 with the browser's offset.
 */
import { MAX_ROLLOUT_WAVES } from '../../../client/limits.js';
import type { FilterDescriptor } from '../fleet/search-query.js';
import { isFilter } from '../fleet/search-query.js';

/** At most this many wave sizes (the service's MAX_ROLLOUT_WAVES). */
export const MAX_WAVES = MAX_ROLLOUT_WAVES;

/** The facet fields the preview breaks the targets down by, in the order shown. */
export const BREAKDOWN_FIELDS = ['health.versionCode', 'health.mode', 'health.hubs.devices.capability.type', 'connection.state'] as const;

/**
 * The company a rollout of the search is for: the one `company` value of the search, or the user's only company;
 * null when the search spans several companies (a rollout is per company).
 */
export function rolloutCompany(query: URLSearchParams, companies: readonly string[]): string | null {
  const chosen = [...new Set(query.getAll('company'))];
  if (chosen.length === 1) return chosen[0] ?? null;
  if (chosen.length === 0 && companies.length === 1) return companies[0] ?? null;
  return null;
}

/**
 * The search as a rollout's `targets.query`: its filter parameters only (no `global`, paging, sort or `type`: the
 * service refuses them, and a rollout targets every match), in the order of the URL.
 */
export function targetQueryOf(query: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams();
  for (const [name, value] of query) if (isFilter(name)) params.append(name, value);
  return params;
}

/** Wave sizes as typed ("10, 100"): the sizes, or what is wrong with the text. Empty text is one wave of every target. */
export function parseWaves(text: string): { sizes: number[] } | { error: string } {
  const parts = text
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (parts.length > MAX_WAVES) return { error: `Give at most ${MAX_WAVES} wave sizes.` };
  const sizes: number[] = [];
  for (const part of parts) {
    if (!/^[1-9][0-9]{0,6}$/.test(part)) return { error: `"${part}" is not a number of devices (a whole number from 1).` };
    sizes.push(Number(part));
  }
  return { sizes };
}

/**
 * How the service splits `total` targets into waves of `sizes`: sizes beyond the targets are trimmed, empty waves
 * dropped, the rest forms one more, last wave. Each wave's size, and whether it is "the rest".
 */
export function splitWaves(sizes: readonly number[], total: number): { size: number; rest: boolean }[] {
  const waves: { size: number; rest: boolean }[] = [];
  let left = total;
  for (const size of sizes) {
    if (left <= 0) break;
    const taken = Math.min(size, left);
    waves.push({ size: taken, rest: false });
    left -= taken;
  }
  if (left > 0) waves.push({ size: left, rest: sizes.length > 0 });
  return waves;
}

/** One field of the preview's breakdown: its display name and each value's count among the targets. */
export interface Breakdown {
  field: string;
  name: string;
  rows: { name: string; value: string; count: number }[];
}

/**
 * The targets by facet field, from the filters endpoint's answer for the same query. Its counts are disjunctive: a
 * field's counts are computed with that field's own selection removed, so for a field the search selects, the
 * unselected values count devices that are NOT targets. The breakdown of the targets therefore keeps, for a selected
 * field, only the selected values (each of those counts devices matching every other filter and that value: targets);
 * a field the search does not select is counted on the targets as they are. Values counting no target are left out.
 * (For a multi-valued field such as the sub-device capability, a target may also have unselected values; those are not
 * known from this answer and are not shown.)
 */
export function breakdownOf(descriptors: readonly FilterDescriptor[], query: URLSearchParams): Breakdown[] {
  const breakdowns: Breakdown[] = [];
  for (const field of BREAKDOWN_FIELDS) {
    const descriptor = descriptors.find((candidate) => candidate.field === field);
    if (descriptor === undefined) continue;
    const selected = query.getAll(field);
    const rows = descriptor.definition.parameters.filter(
      (parameter) => parameter.count > 0 && (selected.length === 0 || selected.includes(parameter.value)),
    );
    breakdowns.push({ field, name: descriptor.name, rows });
  }
  return breakdowns;
}

/** Two digits. */
function pad(value: number): string {
  return String(Math.abs(value)).padStart(2, '0');
}

/**
 * A datetime-local value ("2030-03-01T22:00") as ISO-8601 with the browser's offset at that time
 * ("2030-03-01T22:00:00+01:00"); null when it is not a valid date and time.
 */
export function isoWithOffset(local: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(local)) return null;
  const date = new Date(local);
  if (Number.isNaN(date.getTime())) return null;
  const offset = -date.getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  const day = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
  const time = `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  return `${day}T${time}${sign}${pad(Math.trunc(offset / 60))}:${pad(offset % 60)}`;
}
