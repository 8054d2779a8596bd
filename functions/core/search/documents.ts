import type { Device, StoredDevice } from '../devices/model.js';

/** Resource types that search covers (the `type` filter field). */
export const RESOURCE_TYPES = ['DEVICE', 'SCENARIO'] as const;
/** One resource type. */
export type ResourceType = (typeof RESOURCE_TYPES)[number];

/** A device as search returns it: the device resource plus the search envelope (`type`, `id`, `company`). */
export type DeviceDocument = Device & { type: 'DEVICE' };

/**
 * The search document (and API resource) of a device: its resource members only, so what is stored beside them
 * (its `credential`, the `deleting` mark, table attributes) never reaches the index or a response.
 */
export function deviceDocumentOf(device: StoredDevice): DeviceDocument {
  const document: DeviceDocument = {
    type: 'DEVICE',
    id: device.id,
    company: device.company,
    serial: device.serial,
    created: device.created,
    updated: device.updated,
    connection: device.connection,
  };
  if (device.location !== undefined) document.location = device.location;
  if (device.geoLocation !== undefined) document.geoLocation = device.geoLocation;
  if (device.health !== undefined) document.health = device.health;
  return document;
}

/** A scenario as search returns it (docs/contract.md: `type`, `id`, `company` plus its own fields). */
export interface ScenarioDocument {
  type: 'SCENARIO';
  /** Scenario identifier (`what.id`). */
  id: string;
  company: string;
  name: string;
  description?: string;
  /** Highest semantic version stored (SemVer precedence, not upload order). */
  latestVersion: string;
  /** Stored versions, oldest first. */
  versions: string[];
  /** ISO-8601. */
  created: string;
  /** ISO-8601. */
  updated: string;
}

/** Any resource held by the search index. */
export type SearchDocument = DeviceDocument | ScenarioDocument;

/** Identity of a document in the index: (type, company, id). */
export interface DocumentKey {
  type: ResourceType;
  company: string;
  id: string;
}

/** Stable string form of a document key, `TYPE#company#id`; also the final sort tie-breaker. */
export function documentKeyString(key: DocumentKey): string {
  return `${key.type}#${key.company}#${key.id}`;
}

/**
 * Reads every value at a dotted path, descending through arrays, so that
 * `health.hubs.devices.health.state` yields one value per sub-device.
 * Returns primitives only (strings, numbers, booleans), in document order.
 */
export function valuesAtPath(document: unknown, path: string): (string | number | boolean)[] {
  const out: (string | number | boolean)[] = [];
  let segments = PATH_SEGMENTS.get(path);
  if (segments === undefined) {
    segments = path.split('.');
    if (PATH_SEGMENTS.size < MAX_CACHED_PATHS) PATH_SEGMENTS.set(path, segments);
  }
  collectValues(document, segments, 0, out);
  return out;
}

/**
 * Paths split once: the search engines read the same few dozen registry paths for every document they index, and
 * splitting each path and making a closure per call was a tenth of the embedded engine's load time at 100,000 devices.
 */
const PATH_SEGMENTS = new Map<string, string[]>();
/** Paths kept split, at most (the registry has fewer; a caller's ad hoc paths do not grow the cache beyond it). */
const MAX_CACHED_PATHS = 1_000;

/** Pushes to `out` the primitives at `segments[index…]` under `node` (valuesAtPath's walk). */
function collectValues(node: unknown, segments: readonly string[], index: number, out: (string | number | boolean)[]): void {
  if (node === undefined || node === null) return;
  if (Array.isArray(node)) {
    for (const element of node) collectValues(element, segments, index, out);
    return;
  }
  if (index === segments.length) {
    if (typeof node === 'string' || typeof node === 'number' || typeof node === 'boolean') out.push(node);
    return;
  }
  if (typeof node === 'object') collectValues((node as Record<string, unknown>)[segments[index] as string], segments, index + 1, out);
}

/**
 * Whether `document` matches `filters` as every search adapter matches them: for each field, some value at its path
 * (valuesAtPath, as text) is one of the field's accepted values; fields AND-ed, a field's values OR-ed; no filter
 * matches every document. What a continuous rollout checks a changed device with, in memory.
 */
export function documentMatches(
  document: unknown,
  filters: Iterable<readonly [string, readonly string[]]> | Readonly<Record<string, readonly string[]>>,
): boolean {
  const entries = Symbol.iterator in filters ? [...(filters as Iterable<readonly [string, readonly string[]]>)] : Object.entries(filters);
  return entries.every(([field, values]) => valuesAtPath(document, field).some((value) => values.includes(String(value))));
}
