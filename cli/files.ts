/**
 * Files the CLI reads: device id lists (`deploy --from`) and device records (`devices import`), as CSV (a header row;
 * RFC 4180 quoting, via csv-parse) or JSON (an array). Bounded: a file above MAX_INPUT_FILE_BYTES is refused before
 * it is read.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { parse } from 'csv-parse/sync';
import { UsageError } from './output.js';

/** Largest file `--from` or `devices import` reads, bytes (50 MiB: far above 100,000 ids). */
export const MAX_INPUT_FILE_BYTES = 50 * 1024 * 1024;

/** Most ids or records one file may hold. */
export const MAX_INPUT_RECORDS = 100_000;

/**
 * Reads the records of a CSV or JSON file: a CSV's rows as objects keyed by its header (empty cells left out, a
 * dotted header `location.name` nested), or a JSON array's items as they are (a string item becomes `{ id }`).
 * The format follows the extension (`.csv`, `.json`), else the first non-blank character (`[` is JSON).
 * @throws UsageError when the file is missing, too large, not valid CSV/JSON, or holds more than MAX_INPUT_RECORDS
 */
export async function readRecords(path: string): Promise<Record<string, unknown>[]> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new UsageError(`Cannot read ${path}: no such file.`);
  }
  if (size > MAX_INPUT_FILE_BYTES) throw new UsageError(`${path} is ${size} bytes; the limit is ${MAX_INPUT_FILE_BYTES} bytes: split it.`);
  const text = (await readFile(path, 'utf8')).replace(/^\uFEFF/, '');
  const extension = extname(path).toLowerCase();
  const json = extension === '.json' || (extension !== '.csv' && text.trimStart().startsWith('['));
  const records = json ? jsonRecords(path, text) : csvRecords(path, text);
  if (records.length > MAX_INPUT_RECORDS)
    throw new UsageError(`${path} holds ${records.length} records; the limit is ${MAX_INPUT_RECORDS}: split it.`);
  return records;
}

/**
 * Reads device ids: a CSV's `id` (or `deviceId`) column, or its only column; a JSON array of strings or of objects
 * with `id`. Duplicates are kept once, in first-seen order.
 * @throws UsageError as readRecords, or when a record has no id
 */
export async function readIds(path: string): Promise<string[]> {
  const records = await readRecords(path);
  const ids = records.map((record, index) => {
    const id = record.id ?? record.deviceId ?? (Object.keys(record).length === 1 ? Object.values(record)[0] : undefined);
    if (typeof id !== 'string' || id.trim() === '') {
      throw new UsageError(`${path}, record ${index + 1}: no device id (give an "id" column or field).`);
    }
    return id.trim();
  });
  return [...new Set(ids)];
}

function jsonRecords(path: string, text: string): Record<string, unknown>[] {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(value)) throw new UsageError(`${path} must hold a JSON array.`);
  return value.map((item, index) => {
    if (typeof item === 'string') return { id: item };
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) return item as Record<string, unknown>;
    throw new UsageError(`${path}, item ${index + 1}: expected an object or a string.`);
  });
}

function csvRecords(path: string, text: string): Record<string, unknown>[] {
  let rows: Record<string, string>[];
  try {
    rows = parse(text, { columns: (header: string[]) => header.map((name) => name.trim()), skip_empty_lines: true, trim: true, bom: true });
  } catch (error) {
    throw new UsageError(`${path} is not valid CSV: ${(error as Error).message}`);
  }
  return rows.map((row) => {
    const record: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(row)) if (value !== '') setPath(record, name.split('.'), value);
    return record;
  });
}

/** Sets `record[a][b]… = value` for a dotted header, making the objects on the way. */
function setPath(record: Record<string, unknown>, path: string[], value: string): void {
  let target = record;
  for (const key of path.slice(0, -1)) {
    if (typeof target[key] !== 'object' || target[key] === null) target[key] = {};
    target = target[key] as Record<string, unknown>;
  }
  target[path.at(-1) as string] = value;
}
