/**
 * The callers of administration tests as the user directory knows them: every administration route bounds the token
 * by the caller's user as it is now (functions/core/users/current-administrator.ts), so a test names each caller's
 * current role, companies and enabled flag, and may change them between calls (a demotion, a disable).
 */
import type { Role } from '../../functions/core/access/roles.js';
import type { User, UserDirectory } from '../../functions/core/users/ports.js';

/** A caller as the directory holds them. */
export interface Caller {
  role: Role;
  companies?: string[];
  enabled?: boolean;
}

/** A directory answering `get` for `callers` (usernames case aside), whose entries a test may change. */
export function callersDirectory(callers: Record<string, Caller>): Pick<UserDirectory, 'get'> & { callers: Record<string, Caller> } {
  return {
    callers,
    async get(username: string): Promise<User | undefined> {
      const name = Object.keys(callers).find((key) => key.toLowerCase() === username.toLowerCase());
      const caller = name === undefined ? undefined : callers[name];
      if (name === undefined || caller === undefined) return undefined;
      return {
        username: name,
        email: `${name}@example.com`,
        role: caller.role,
        companies: caller.companies ?? [],
        enabled: caller.enabled ?? true,
        status: 'CONFIRMED',
        createdAt: '2026-11-01T00:00:00.000Z',
        updatedAt: '2026-11-01T00:00:00.000Z',
      };
    },
  };
}
