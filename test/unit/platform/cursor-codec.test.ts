/**
 * The one cursor codec of the paged listings: signed round trips, and every cursor it did not issue for the listing at
 * hand (altered, made up, another listing, another key) refused with the 400 naming `cursor`; the signing key's
 * configuration (CURSOR_SIGNING_KEY) and the local runtime's key file.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CursorCodec, cursorListing } from '../../../functions/adapters/aws/cursor-codec.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { CURSOR_KEY_FILE, localCursorSigningKey } from '../../../functions/local/cursor-key.js';
import { cursorSigningKey } from '../../../functions/platform/config.js';
import { problemOf } from '../../../functions/platform/problem.js';

const KEY = randomBytes(32);
const codec = new CursorCodec(() => KEY);
const LISTING = cursorListing('active-deployments', 'globex', undefined);
const KEY_OF_ITEM = { sk: 'globex-kiosk-0001#globex-timetable#1.0.0' };

/** The problem a refused cursor gives: 400, `errors: [{ path: 'cursor' }]`, a detail saying what to do. */
function refusal(action: () => unknown): BadRequestError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(BadRequestError);
    const problem = problemOf(error as BadRequestError);
    expect(problem.status).toBe(400);
    expect((problem.errors as { path: string }[]).map((violation) => violation.path)).toEqual(['cursor']);
    expect(problem.detail).toMatch(/nextCursor.*unchanged.*start over without cursor/);
    return error as BadRequestError;
  }
  throw new Error('expected the cursor to be refused');
}

describe('CursorCodec', () => {
  it('gives back the key it encoded, in a short url-safe cursor', () => {
    const cursor = codec.encode(LISTING, KEY_OF_ITEM);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(cursor.length).toBeLessThan(100);
    expect(codec.decode(LISTING, cursor)).toEqual(KEY_OF_ITEM);
    expect(encodeURIComponent(cursor)).toBe(cursor);
  });

  it('refuses the cursor with any one character changed, dropped or added', () => {
    const cursor = codec.encode(LISTING, KEY_OF_ITEM);
    for (let index = 0; index < cursor.length; index += 1) {
      for (const replacement of ['A', 'B', '-', '.']) {
        if (cursor[index] === replacement) continue;
        refusal(() => codec.decode(LISTING, `${cursor.slice(0, index)}${replacement}${cursor.slice(index + 1)}`));
      }
      refusal(() => codec.decode(LISTING, `${cursor.slice(0, index)}${cursor.slice(index + 1)}`));
    }
    refusal(() => codec.decode(LISTING, `${cursor}A`));
  });

  it('refuses a cursor issued for another listing, company or filter', () => {
    const cursor = codec.encode(LISTING, KEY_OF_ITEM);
    for (const other of [
      cursorListing('scenarios', 'globex'),
      cursorListing('active-deployments', 'acme', undefined),
      cursorListing('active-deployments', 'globex', 'globex-kiosk-0001'),
      cursorListing('active-deployments', 'globex', 'undefined'),
    ]) {
      refusal(() => codec.decode(other, cursor));
    }
  });

  it('refuses a cursor signed with another key', () => {
    const cursor = new CursorCodec(() => randomBytes(32)).encode(LISTING, KEY_OF_ITEM);
    refusal(() => codec.decode(LISTING, cursor));
  });

  it('refuses made-up cursors: a bare key, no signature, extra parts, non-base64url, too long', () => {
    const bare = Buffer.from(JSON.stringify({ pk: 'ACTIVE#globex', sk: '' })).toString('base64url');
    const [payload, signature] = codec.encode(LISTING, KEY_OF_ITEM).split('.') as [string, string];
    for (const cursor of [
      bare,
      `${bare}.`,
      `.${signature}`,
      `${payload}.${signature}.${signature}`,
      `${payload}+.${signature}`,
      `${'A'.repeat(3000)}.${signature}`,
      '.',
    ]) {
      refusal(() => codec.decode(LISTING, cursor));
    }
  });

  it('reads its key once, on first use, and refuses a key shorter than 32 bytes', () => {
    let reads = 0;
    const counted = new CursorCodec(() => {
      reads += 1;
      return KEY;
    });
    expect(reads).toBe(0);
    counted.decode(LISTING, counted.encode(LISTING, KEY_OF_ITEM));
    counted.encode(LISTING, KEY_OF_ITEM);
    expect(reads).toBe(1);
    expect(() => new CursorCodec(() => randomBytes(31)).encode(LISTING, KEY_OF_ITEM)).toThrow(/at least 32 bytes/);
  });

  it('binds each filter to its position (cursorListing)', () => {
    expect(cursorListing('history', 'acme', 'a', undefined)).not.toBe(cursorListing('history', 'acme', undefined, 'a'));
    expect(cursorListing('history', 'acme', 'a#b')).not.toBe(cursorListing('history', 'acme#a', 'b'));
  });
});

describe('CURSOR_SIGNING_KEY', () => {
  const saved = process.env.CURSOR_SIGNING_KEY;
  afterEach(() => {
    if (saved === undefined) delete process.env.CURSOR_SIGNING_KEY;
    else process.env.CURSOR_SIGNING_KEY = saved;
  });

  it('is read as hex or base64 of at least 32 bytes', () => {
    const key = randomBytes(48);
    process.env.CURSOR_SIGNING_KEY = key.toString('hex');
    expect(cursorSigningKey().equals(key)).toBe(true);
    process.env.CURSOR_SIGNING_KEY = key.toString('base64');
    expect(cursorSigningKey().equals(key)).toBe(true);
    process.env.CURSOR_SIGNING_KEY = key.toString('base64url');
    expect(cursorSigningKey().equals(key)).toBe(true);
    // What Secrets Manager generates (64 letters and digits) is base64 of 48 bytes.
    process.env.CURSOR_SIGNING_KEY = `${'Ab3'.repeat(21)}x`;
    expect(cursorSigningKey()).toHaveLength(48);
  });

  it('fails naming the variable when it is missing, too short or neither hex nor base64', () => {
    delete process.env.CURSOR_SIGNING_KEY;
    expect(() => cursorSigningKey()).toThrow(/CURSOR_SIGNING_KEY/);
    for (const value of [
      '',
      randomBytes(31).toString('hex'),
      randomBytes(16).toString('base64'),
      'not a key, with spaces and punctuation!',
    ]) {
      process.env.CURSOR_SIGNING_KEY = value;
      expect(() => cursorSigningKey(), value).toThrow(/CURSOR_SIGNING_KEY/);
    }
  });
});

describe('the local runtime cursor key', () => {
  let directory: string | undefined;
  afterEach(async () => {
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });

  it('is generated once into the data folder, readable by its owner only, and the same on every later start', async () => {
    directory = await mkdtemp(join(tmpdir(), 'cursor-key-'));
    const first = await localCursorSigningKey(directory);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(join(directory, CURSOR_KEY_FILE))).mode & 0o777).toBe(0o600);
    expect(await localCursorSigningKey(directory)).toBe(first);
    // A file cut short is replaced by a new key.
    await writeFile(join(directory, CURSOR_KEY_FILE), '');
    const replaced = await localCursorSigningKey(directory);
    expect(replaced).toMatch(/^[0-9a-f]{64}$/);
    expect((await readFile(join(directory, CURSOR_KEY_FILE), 'utf8')).trim()).toBe(replaced);
  });
});

describe('a paging function', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
    vi.resetModules();
  });

  it('fails its cold start, naming CURSOR_SIGNING_KEY, when the key is not configured', async () => {
    Object.assign(process.env, {
      COMPANIES_TABLE: 'companies',
      DEVICES_TABLE: 'devices',
      SCENARIOS_TABLE: 'scenarios',
      DEPLOYMENTS_TABLE: 'deployments',
      PRESENCE_TABLE: 'presence',
      ROLLOUTS_TABLE: 'rollouts',
      COMMANDS_TABLE: 'commands',
      WEBHOOKS_TABLE: 'webhooks',
      ALERTS_TABLE: 'alerts',
      API_CLIENTS_TABLE: 'api-clients',
      ARCHIVE_BUCKET: 'archives',
      AWS_REGION: 'us-east-1',
    });
    delete process.env.CURSOR_SIGNING_KEY;
    const paging = {
      'deployments-list': () => import('../../../functions/handlers/deployments-list.js'),
      'deployments-history': () => import('../../../functions/handlers/deployments-history.js'),
      'scenarios-list': () => import('../../../functions/handlers/scenarios-list.js'),
    };
    for (const [entry, load] of Object.entries(paging)) {
      vi.resetModules();
      await expect(load(), entry).rejects.toThrow(/CURSOR_SIGNING_KEY is missing/);
    }
    vi.resetModules();
    process.env.CURSOR_SIGNING_KEY = randomBytes(32).toString('hex');
    await expect(import('../../../functions/handlers/scenarios-list.js')).resolves.toHaveProperty('handler');
  });
});
