/**
 * How the CLI answers: tables for people, `--json` for scripts, errors as the problem's `detail` and each violation on
 * stderr (never a stack trace), and the exit codes of docs/contract.md, "Command-line client": 0 success, 1 a failed
 * request (or failed items), 2 bad usage.
 */
import { SingleBar } from 'cli-progress';
import Table from 'cli-table3';
import { BIDI_FORMATTING_RANGES, hiddenCharacters } from '../client/hidden-characters.js';
import { ApiError } from '../client/index.js';

/** Exit code of a successful command. */
export const EXIT_OK = 0;
/** Exit code of a command whose request failed, or whose batch has failed items. */
export const EXIT_FAILED = 1;
/** Exit code of bad usage: unknown command or option, missing or invalid argument. */
export const EXIT_USAGE = 2;

/** Bad usage found by a command itself (a missing company, an unreadable file): exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/**
 * A command that failed after its requests were answered (items refused, an upload rejected, a wait that timed out):
 * its output was already printed; exit 1 with this message.
 */
export class CommandFailed extends Error {
  override name = 'CommandFailed';
}

/**
 * Ends the process quietly (exit code 0, as for SIGPIPE) when the reader of stdout closes it early, e.g.
 * `dss scenarios | head -1`: the next write fails with EPIPE, which would otherwise crash with a stack trace.
 * Any other stdout error is thrown. Installed once per process by bin/dss.mjs.
 */
export function endQuietlyOnClosedStdout(): void {
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(EXIT_OK);
    throw error;
  });
}

/**
 * Characters a terminal acts on, or that reorder what it shows, instead of showing them: control characters and the
 * bidirectional formatting characters (client/hidden-characters.ts).
 */
const HIDDEN = hiddenCharacters();

/** How line feed, carriage return and tab are written (the other controls as `\xNN`). */
const ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * `text` with every character a terminal would act on rather than show written visibly, as kubectl and git do:
 * `\n`, `\r` and `\t` for a line feed, carriage return and tab, `\x1b` for another C0 or C1 control or DEL, `\u202e`
 * for a bidirectional formatting character; everything else as it is.
 * @param lines true when `text` is whole lines of output, whose line feeds are kept; false (a value, a table cell)
 *   shows line feeds as `\n` too.
 * @example visible('\u001b[31mRED') // '\\x1b[31mRED'
 */
export function visible(text: string, lines = false): string {
  return text.replace(HIDDEN, (character) => {
    if (lines && character === '\n') return character;
    const code = character.charCodeAt(0);
    const named = ESCAPES[character];
    if (named !== undefined) return named;
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/** Writes lines to stdout, their hidden characters shown (visible): every line a person reads goes through here. */
export function say(line = ''): void {
  process.stdout.write(`${visible(line, true)}\n`);
}

/** Writes a line to stderr (progress, notes: what scripts reading stdout must not see), its hidden characters shown. */
export function note(line: string): void {
  process.stderr.write(`${visible(line, true)}\n`);
}

/**
 * Prints a value as indented JSON on stdout (`--json`): exact, for scripts. JSON escapes C0 controls itself (`\u001b`),
 * and DEL, C1 controls and bidirectional formatting characters are escaped too (UNESCAPED_IN_JSON): the parsed value
 * is the service's, character for character, and a terminal shows the JSON without acting on it.
 */
export function printJson(value: unknown): void {
  process.stdout.write(
    `${JSON.stringify(value, null, 2).replace(UNESCAPED_IN_JSON, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)}\n`,
  );
}

/**
 * What JSON.stringify writes raw but a terminal would act on or reorder: DEL, C1 controls, the bidirectional
 * formatting characters, and the line and paragraph separators. printJson writes them as `\u009b`-style escapes,
 * which parse to the very same string.
 */
const UNESCAPED_IN_JSON = new RegExp(`[\\u007f-\\u009f${BIDI_FORMATTING_RANGES}\\u2028\\u2029]`, 'g');

/** A table column: its heading and how a row shows in it. */
export interface Column<T> {
  head: string;
  value: (row: T) => unknown;
}

/** Table borders without a rule between rows: a listing of 100 rows stays 100 lines (plus the heading). */
const COMPACT = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' };

/** Prints rows as a table on stdout; `empty` instead when there are none. */
export function printTable<T>(rows: readonly T[], columns: readonly Column<T>[], empty = 'Nothing to show.'): void {
  if (rows.length === 0) {
    say(empty);
    return;
  }
  const table = new Table({ head: columns.map((column) => column.head), style: { head: [], border: [] }, chars: COMPACT });
  for (const row of rows) table.push(columns.map((column) => cell(column.value(row))));
  say(table.toString());
}

/** Prints one object as a two-column table (field, value) on stdout. */
export function printRecord(record: Readonly<Record<string, unknown>>): void {
  const table = new Table({ style: { head: [], border: [] }, chars: COMPACT });
  for (const [key, value] of Object.entries(record)) if (value !== undefined) table.push({ [key]: cell(value) });
  say(table.toString());
}

/**
 * A value as a table cell shows it, its hidden characters shown (visible): on one line, or an array of strings one
 * per line (a record's errors).
 */
function cell(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value) && value.every((line) => typeof line === 'string')) return value.map((line) => visible(line)).join('\n');
  return visible(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

/** A progress display on stderr: a bar on a terminal, a line per update elsewhere (logs, tests, CI). */
export interface Progress {
  /** Sets the done amount (items, bytes). */
  update(done: number): void;
  stop(): void;
}

/**
 * Starts a progress display of `total` units.
 * @param label e.g. `Deploying` (items) or `Uploading` (bytes: shown as KiB/MiB)
 */
export function startProgress(label: string, total: number, unit: 'items' | 'bytes' = 'items'): Progress {
  const show = (value: number) => (unit === 'bytes' ? formatBytes(value) : value.toLocaleString('en-US'));
  if (!process.stderr.isTTY) {
    let last = -1;
    return {
      update(done) {
        if (done === last) return;
        last = done;
        note(`${label}: ${show(done)} of ${show(total)} ${unit === 'items' ? 'items' : ''}`.trimEnd());
      },
      stop() {},
    };
  }
  const bar = new SingleBar({
    format: `${label} [{bar}] {percentage}% | {shown} of {totalShown}`,
    stream: process.stderr,
    hideCursor: true,
    clearOnComplete: false,
  });
  bar.start(total, 0, { shown: show(0), totalShown: show(total) });
  return {
    update(done) {
      bar.update(done, { shown: show(done), totalShown: show(total) });
    },
    stop() {
      bar.stop();
    },
  };
}

/** Bytes for people: `512 B`, `3.4 KiB`, `12.0 MiB`, `1.00 GiB` (a value that would show as 1024.0 takes the next unit). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB'] as const;
  let value = bytes / 1024;
  let unit = 0;
  while (unit < units.length - 1 && Number(value.toFixed(1)) >= 1024) {
    value /= 1024;
    unit += 1;
  }
  return unit === units.length - 1 ? `${value.toFixed(2)} GiB` : `${value.toFixed(1)} ${units[unit]}`;
}

/**
 * Prints an error on stderr as a user should see it and gives the exit code: an answer's problem `detail` and each
 * violation (1), a connection that failed (1), bad usage (2). Never a stack trace.
 */
export function reportError(error: unknown): number {
  if (error instanceof UsageError) {
    note(`error: ${error.message}`);
    return EXIT_USAGE;
  }
  if (error instanceof CommandFailed) {
    note(`error: ${error.message}`);
    return EXIT_FAILED;
  }
  if (error instanceof ApiError) {
    const { problem } = error;
    // What the service wrote is shown on its line whatever it holds: a line feed in a detail must not start a line
    // that reads as the CLI's own.
    note(`error: ${error.status} ${visible(problem.title)}: ${visible(problem.detail)}`);
    for (const violation of problem.errors ?? []) note(`  ${visible(violation.path)}: ${visible(violation.message)}`);
    // A 413 of the storage quota names the figures: what it allows, what is used, what the archive needed.
    const { quotaBytes, usedBytes, archiveBytes } = problem as { quotaBytes?: unknown; usedBytes?: unknown; archiveBytes?: unknown };
    if (typeof quotaBytes === 'number' && typeof usedBytes === 'number' && typeof archiveBytes === 'number') {
      const figure = (bytes: number) => `${formatBytes(bytes)} (${bytes.toLocaleString('en-US')} bytes)`;
      note(`  quota: ${figure(quotaBytes)}; used: ${figure(usedBytes)}; available: ${figure(Math.max(0, quotaBytes - usedBytes))}`);
      note(`  archive: ${figure(archiveBytes)}`);
    }
    if (problem.errorCount !== undefined && problem.errors !== undefined && problem.errorCount > problem.errors.length) {
      note(`  … and ${problem.errorCount - problem.errors.length} more`);
    }
    const retryAfter = error.response.headers.get('retry-after');
    if (retryAfter !== null) note(`Retry after ${retryAfter} s.`);
    return EXIT_FAILED;
  }
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (error instanceof TypeError && cause !== undefined) {
    note(
      `error: cannot reach the service (${cause.code ?? cause.message ?? 'connection failed'}): check the address, or start it with \`npm start\`.`,
    );
    return EXIT_FAILED;
  }
  note(`error: ${error instanceof Error ? error.message : String(error)}`);
  return EXIT_FAILED;
}
