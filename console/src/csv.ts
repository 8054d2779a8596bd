/**
 * CSV text the console writes (the fleet's and the history's exports): RFC 4180, and no cell starts a spreadsheet
 * formula. Free of the DOM, so that unit tests run it as it is; download.ts offers the text as a file.
 */

/**
 * One CSV cell (RFC 4180): always quoted, quotes doubled; a cell starting with = + - @ (or a tab or carriage
 * return) is prefixed with ' so that a spreadsheet does not run it as a formula (CSV injection).
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

/** Rows of cells as CSV text: cells separated by commas, records ended by CRLF (RFC 4180). */
export function csvText(rows: readonly (readonly string[])[]): string {
  return rows.map((row) => `${row.map(csvCell).join(',')}\r\n`).join('');
}
