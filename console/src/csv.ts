/**
 * CSV text the console writes (the fleet's and the history's exports): RFC 4180, no cell starts a spreadsheet
 * formula, and hidden characters are written as the pages show them. Free of the DOM, so that unit tests run it as
 * it is; download.ts offers the text as a file.
 */
import { visibleText } from './visible-text.js';

/**
 * One CSV cell (RFC 4180): always quoted, quotes doubled; bidirectional and control characters as their marks
 * (`<U+202E>`, visible-text.ts), so that a spreadsheet does not reorder or hide what the console shows; a cell
 * starting with = + - @ (or a tab or carriage return) is prefixed with ' so that a spreadsheet does not run it as a
 * formula (CSV injection).
 */
export function csvCell(value: string): string {
  const shown = visibleText(value);
  const safe = /^[=+\-@\t\r]/.test(shown) ? `'${shown}` : shown;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** Rows of cells as CSV text: cells separated by commas, records ended by CRLF (RFC 4180). */
export function csvText(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}
