/**
 * The local identity provider's users (users.json in LOCAL_AUTH_DIR), changed at run time by users administration and
 * by sign-ins (a new password, refresh tokens). The local runtime is one process: the users live in memory and every
 * change is written through to the file (a temporary file renamed over it, so a crash leaves the old or the new
 * file, never half of one), one change at a time. Usernames are case-insensitive, as the user pool's are on AWS
 * (`signInCaseSensitive: false`): `Alice` finds `alice`, and a user keeps the case they were created with.
 */

import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Role } from '../../core/access/roles.js';
import type { DisabledBy } from '../../core/users/ports.js';

/** One refresh token a local user holds: its SHA-256 (hex), never the token, and when it stops working. */
export interface LocalRefreshToken {
  sha256: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * A local user as users.json holds it. The demo users of an earlier data folder have only the first four members:
 * the others are optional, and a user without `role` signs in with its `scope` as written.
 */
export interface LocalUser {
  username: string;
  /** scrypt hash (`scrypt$N$r$p$salt$hash`, base64 parts; hashPassword). */
  passwordHash: string;
  companies: string[];
  /** Space-separated scopes: the role's (scopeClaimOf) when `role` is set, kept for older data folders. */
  scope: string;
  role?: Role;
  email?: string;
  /** @default true */
  enabled?: boolean;
  /** Who disabled the user, while they are disabled. */
  disabledBy?: DisabledBy;
  /** Invited or reset: the next sign-in must set a new password (the `new_password_required` challenge). */
  mustChangePassword?: boolean;
  /** ISO-8601. */
  createdAt?: string;
  /** ISO-8601. */
  updatedAt?: string;
  refreshTokens?: LocalRefreshToken[];
}

/**
 * What a change function answers for the user it was given: the user to keep, `'delete'` to remove them, or
 * undefined to leave everything as it is (nothing written).
 */
export type LocalUserChange = LocalUser | 'delete' | undefined;

/** The key of `username` in the store: usernames that differ only in case are one user. */
function keyOf(username: string): string {
  return username.toLowerCase();
}

/** The users of users.json, in memory, written through, keyed by keyOf(username). */
export class LocalUserStore {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly path: string,
    private readonly users: Map<string, LocalUser>,
  ) {}

  /**
   * Reads users.json at `path`.
   * @throws Error when the file is missing or not a JSON array.
   */
  static async open(path: string): Promise<LocalUserStore> {
    const users = JSON.parse(await readFile(path, 'utf8')) as unknown;
    if (!Array.isArray(users)) throw new Error(`${path} does not hold a JSON array of users.`);
    const byKey = new Map<string, LocalUser>();
    for (const user of users as LocalUser[]) {
      const twin = byKey.get(keyOf(user.username));
      if (twin !== undefined) {
        throw new Error(
          `${path} holds the users '${twin.username}' and '${user.username}', one username but for case; rename or remove one.`,
        );
      }
      byKey.set(keyOf(user.username), user);
    }
    return new LocalUserStore(path, byKey);
  }

  /** A copy of the user (`username` in any case), or undefined when there is none. */
  get(username: string): LocalUser | undefined {
    const user = this.users.get(keyOf(username));
    return user === undefined ? undefined : structuredClone(user);
  }

  /** Copies of every user, in username order. */
  all(): LocalUser[] {
    return [...this.users.values()].map((user) => structuredClone(user)).sort((a, b) => (a.username < b.username ? -1 : 1));
  }

  /**
   * Runs `change` on (a copy of) the user (`username` in any case), or undefined when there is none, after every change before it has been
   * written, and keeps its answer (LocalUserChange). The file is written before the promise resolves.
   * @returns the user kept (a copy), undefined when deleted or left alone.
   * @throws Error when `change` throws (nothing written) or the file cannot be written (memory is then left as before).
   */
  update(username: string, change: (user: LocalUser | undefined) => LocalUserChange): Promise<LocalUser | undefined> {
    const key = keyOf(username);
    const run = this.queue.then(async () => {
      const before = this.users.get(key);
      const answer = change(before === undefined ? undefined : structuredClone(before));
      if (answer === undefined) return undefined;
      // A user keeps the case they were created with, whatever case names them here.
      const kept = answer === 'delete' ? undefined : { ...answer, username: before?.username ?? username };
      const next = new Map(this.users);
      if (kept === undefined) next.delete(key);
      else next.set(key, structuredClone(kept));
      await this.write(next);
      if (kept === undefined) this.users.delete(key);
      else this.users.set(key, structuredClone(kept));
      return kept === undefined ? undefined : structuredClone(kept);
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async write(users: Map<string, LocalUser>): Promise<void> {
    const temporary = `${this.path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify([...users.values()], null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, this.path);
  }
}
