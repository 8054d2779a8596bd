/**
 * What the archive checks know of one central directory entry, and the rule for a safe entry name (which the
 * central directory's names and the local headers' names must both follow).
 */
import type { ZipEntry } from './zip-reader.js';

/**
 * Why `name` is unsafe to extract (a backslash, an absolute path, a drive letter, a `..` segment, a NUL character),
 * or undefined when it is safe.
 */
export function unsafeEntryName(name: string): string | undefined {
  if (name.includes('\\')) return 'entry name contains a backslash';
  if (name.startsWith('/')) return 'entry name is an absolute path';
  if (/^[A-Za-z]:/.test(name)) return 'entry name starts with a drive letter';
  if (name.split('/').includes('..')) return 'entry name contains a ".." segment';
  if (name.includes('\u0000')) return 'entry name contains a NUL character';
  return undefined;
}

/** A central directory entry as the archive checks saw it. */
export interface ScannedEntry {
  name: string;
  entry: ZipEntry;
  directory: boolean;
  /** Whether the entry's data may be read (not encrypted, not a link, supported method, not a bomb). */
  readable: boolean;
}
