/**
 * The user directory of the local runtime: the local identity provider's users (users.json, LocalUserStore), which
 * its token endpoint signs in. What Cognito emails on AWS (an invitation's or a reset's temporary password) is
 * answered here instead, to be shown once.
 */
import { randomPassword } from '../../core/access/password-policy.js';
import { type Role, roleCovering, scopeClaimOf } from '../../core/access/roles.js';
import type { DirectoryChanges, NewUser, User, UserDirectory } from '../../core/users/ports.js';
import { hashPassword } from './local-identity-provider.js';
import type { LocalUser, LocalUserStore } from './local-user-store.js';

/** Length of a temporary password: about 95 bits of randomness (randomPassword), short enough to read out. */
export const TEMPORARY_PASSWORD_LENGTH = 16;

/** Shown as `createdAt` of a user written before users were administered (the demo users of an older data folder). */
const UNKNOWN_TIME = new Date(0).toISOString();

/**
 * A local user as administration shows it. A user of an older data folder has no role (its role is the one whose
 * scopes its `scope` holds, else `viewer`), no email (`''`) and no times (the epoch).
 */
export function userViewOf(user: LocalUser): User {
  const role: Role = user.role ?? roleCovering(user.scope.split(' ').filter((scope) => scope !== ''));
  return {
    username: user.username,
    email: user.email ?? '',
    role,
    companies: [...user.companies],
    enabled: user.enabled !== false,
    ...(user.enabled === false && user.disabledBy !== undefined ? { disabledBy: { ...user.disabledBy } } : {}),
    status: user.mustChangePassword === true ? 'FORCE_CHANGE_PASSWORD' : 'CONFIRMED',
    createdAt: user.createdAt ?? user.updatedAt ?? UNKNOWN_TIME,
    updatedAt: user.updatedAt ?? user.createdAt ?? UNKNOWN_TIME,
  };
}

/**
 * The UserDirectory over the local users: every change written through to users.json before it answers. Disabling,
 * deleting and resetting a password drop the user's refresh tokens, so the token endpoint refuses them at once.
 * Listing reads the users in memory in username order; its cursor is the last username of the page.
 */
export class LocalUserDirectory implements UserDirectory {
  /** @param now the clock of `createdAt` and `updatedAt`. */
  constructor(
    private readonly store: LocalUserStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** @inheritdoc */
  async create(user: NewUser): Promise<{ user: User; temporaryPassword: string } | undefined> {
    const password = randomPassword(TEMPORARY_PASSWORD_LENGTH);
    const passwordHash = await hashPassword(password);
    const at = this.now().toISOString();
    const created = await this.store.update(user.username, (existing) =>
      existing !== undefined
        ? undefined
        : {
            username: user.username,
            passwordHash,
            companies: [...user.companies],
            scope: scopeClaimOf(user.role),
            role: user.role,
            email: user.email,
            enabled: true,
            mustChangePassword: true,
            createdAt: at,
            updatedAt: at,
            refreshTokens: [],
          },
    );
    return created === undefined ? undefined : { user: userViewOf(created), temporaryPassword: password };
  }

  /** @inheritdoc */
  async get(username: string): Promise<User | undefined> {
    const user = this.store.get(username);
    return user === undefined ? undefined : userViewOf(user);
  }

  /** @inheritdoc */
  async list(
    filter: { company?: string },
    limit: number,
    cursor: string | undefined,
  ): Promise<{ items: User[]; nextCursor: string | undefined }> {
    const { company } = filter;
    const matching = this.store
      .all()
      .filter((user) => (cursor === undefined || user.username > cursor) && (company === undefined || user.companies.includes(company)));
    const items = matching.slice(0, limit).map(userViewOf);
    const last = items.at(-1);
    return { items, nextCursor: matching.length > limit && last !== undefined ? last.username : undefined };
  }

  /** @inheritdoc */
  async update(username: string, changes: DirectoryChanges): Promise<User | undefined> {
    const at = this.now().toISOString();
    const updated = await this.store.update(username, (user) => {
      if (user === undefined) return undefined;
      const next: LocalUser = { ...user, updatedAt: at };
      if (changes.role !== undefined) {
        next.role = changes.role;
        next.scope = scopeClaimOf(changes.role);
      }
      if (changes.companies !== undefined) next.companies = [...changes.companies];
      if (changes.enabled !== undefined) next.enabled = changes.enabled;
      if (changes.enabled === false) next.refreshTokens = [];
      if (changes.disabledBy === null) delete next.disabledBy;
      else if (changes.disabledBy !== undefined) next.disabledBy = { ...changes.disabledBy };
      return next;
    });
    return updated === undefined ? undefined : userViewOf(updated);
  }

  /** @inheritdoc */
  async delete(username: string): Promise<boolean> {
    let existed = false;
    await this.store.update(username, (user) => {
      existed = user !== undefined;
      return existed ? 'delete' : undefined;
    });
    return existed;
  }

  /** @inheritdoc */
  async resetPassword(username: string): Promise<{ temporaryPassword: string } | undefined> {
    const password = randomPassword(TEMPORARY_PASSWORD_LENGTH);
    const passwordHash = await hashPassword(password);
    const at = this.now().toISOString();
    const reset = await this.store.update(username, (user) =>
      user === undefined ? undefined : { ...user, passwordHash, mustChangePassword: true, refreshTokens: [], updatedAt: at },
    );
    return reset === undefined ? undefined : { temporaryPassword: password };
  }

  /** @inheritdoc */
  async countInCompany(company: string): Promise<number> {
    return this.store.all().filter((user) => user.companies.includes(company)).length;
  }

  /** @inheritdoc */
  async countActivePlatformAdmins(): Promise<number> {
    return this.store
      .all()
      .map(userViewOf)
      .filter((user) => user.role === 'platform-admin' && user.enabled && user.status === 'CONFIRMED').length;
  }
}
