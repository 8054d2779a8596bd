import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** File of the local cursor signing key, in the runtime's auth folder (beside the token signing keys). */
export const CURSOR_KEY_FILE = 'cursor-key';

const HEX_KEY = /^[0-9a-f]{64}$/;

/**
 * The local runtime's CURSOR_SIGNING_KEY: 32 random bytes as 64 hex digits, generated on the first start into
 * `<directory>/cursor-key` (mode 0600) and read back on every later start, so that cursors survive restarts. A file
 * that holds no such key (e.g. cut short by a crash) is replaced.
 * @returns the key as hex.
 * @throws Error when the file can be neither read nor written.
 */
export async function localCursorSigningKey(directory: string): Promise<string> {
  const path = join(directory, CURSOR_KEY_FILE);
  try {
    await writeFile(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = (await readFile(path, 'utf8')).trim();
  if (HEX_KEY.test(key)) return key;
  const replacement = randomBytes(32).toString('hex');
  await writeFile(path, `${replacement}\n`, { mode: 0o600 });
  return replacement;
}
