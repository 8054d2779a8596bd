/** How the console writes values for people: dates, sizes, counts, enumerations. */

/** `EMBEDDED_PLATFORM_ANDROID` → `Embedded platform android` (the service's display names do the same). */
export function humanize(value: string): string {
  const words = value.toLowerCase().split('_');
  const first = words[0] ?? '';
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(' ');
}

/** An ISO-8601 instant as a local date and time (`2026-11-27 08:15`), or an em dash when absent. */
export function dateTime(iso: string | null | undefined): string {
  if (iso === null || iso === undefined || iso === '') return '—';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/** How long ago an ISO-8601 instant was (`5 min ago`), from `now` (ms since the epoch). */
export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (iso === null || iso === undefined) return '';
  const seconds = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return '';
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** A count with thousands separators (`12,345`). */
export function count(value: number): string {
  return value.toLocaleString('en-US');
}

/** Bytes as KB, MB or GB (powers of 1,024), one decimal. */
export function bytes(value: number): string {
  if (value < 1024) return `${value} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let scaled = value / 1024;
  let unit = 0;
  while (scaled >= 1024 && unit < units.length - 1) {
    scaled /= 1024;
    unit += 1;
  }
  return `${scaled.toFixed(1)} ${units[unit]}`;
}
