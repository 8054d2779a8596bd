/**
 * Ports of users administration (functions/core/users/admin.ts): the directory of users, Cognito's user pool on AWS and
 * the local identity provider's users locally. A user holds one role (functions/core/access/roles.ts) and the companies
 * it acts on; the token they get carries the role's scopes and those companies.
 */
import type { Role } from '../access/roles.js';

/**
 * Where a user stands with their password, in Cognito's terms (UserStatusType):
 * - `FORCE_CHANGE_PASSWORD`: invited or reset; the next sign-in answers the `new_password_required` challenge;
 * - `CONFIRMED`: has set their own password.
 */
export type UserStatus = 'FORCE_CHANGE_PASSWORD' | 'CONFIRMED';

/**
 * Who disabled a user, and the role they acted with: a user a platform administrator disabled stays disabled until a
 * platform administrator enables them (a company administrator can neither enable them, reset their password nor
 * delete them).
 */
export interface DisabledBy {
  /** The administrator's username (the audit entry's `actor`). */
  username: string;
  role: Role;
}

/** A user as administration shows it. Never holds a password or its hash. */
export interface User {
  /** 1 to 128 characters: letters, digits, `.`, `_`, `-` or `@`, starting with a letter or digit; fixed for good. */
  username: string;
  /** Where invitations and resets are sent (Cognito sends them on AWS). */
  email: string;
  role: Role;
  /** Company ids the user acts on (a platform-admin may have none). */
  companies: string[];
  /** false: the user cannot sign in, and their refresh tokens are refused. */
  enabled: boolean;
  /** Who disabled the user, while they are disabled (absent for a user disabled before this was recorded). */
  disabledBy?: DisabledBy;
  status: UserStatus;
  /** ISO-8601. */
  createdAt: string;
  /** ISO-8601. */
  updatedAt: string;
}

/** What inviting a user takes. */
export interface NewUser {
  username: string;
  email: string;
  role: Role;
  companies: string[];
}

/** What an administrator may change of a user (at least one member). */
export interface UserChanges {
  role?: Role;
  companies?: string[];
  enabled?: boolean;
}

/** What the directory writes on a change: the administrator's changes, and who disabled the user (null: nobody now). */
export interface DirectoryChanges extends UserChanges {
  disabledBy?: DisabledBy | null;
}

/**
 * The directory of users. Listing and counting read the whole directory page by page where the backend cannot filter
 * on companies (Cognito's ListUsers filters standard attributes only): its cost is one call per 60 users.
 */
export interface UserDirectory {
  /**
   * Creates the user with a temporary password (status FORCE_CHANGE_PASSWORD) unless the username is taken. Cognito
   * emails the invitation with the temporary password (AdminCreateUser); locally the temporary password is returned,
   * to be shown once.
   * @returns undefined when the username is taken (nothing written).
   */
  create(user: NewUser): Promise<{ user: User; temporaryPassword?: string } | undefined>;
  /** The user, or undefined when there is none. */
  get(username: string): Promise<User | undefined>;
  /**
   * A page of users in username order, only those holding `company` when given, continuing after `cursor` (this
   * listing's own opaque `nextCursor`, which the use case signs). A page may hold fewer than `limit` users and still
   * have a next one.
   */
  list(filter: { company?: string }, limit: number, cursor: string | undefined): Promise<{ items: User[]; nextCursor: string | undefined }>;
  /**
   * Changes the user's role, companies, enabled flag and/or who disabled them. Disabling also ends every session:
   * refresh tokens are refused from then on (Cognito: AdminDisableUser, then AdminUserGlobalSignOut).
   * @returns the user after the change, or undefined when there is none (nothing written).
   */
  update(username: string, changes: DirectoryChanges): Promise<User | undefined>;
  /** Deletes the user and ends their sessions. @returns false when there was none. */
  delete(username: string): Promise<boolean>;
  /**
   * Gives the user a new temporary password (status FORCE_CHANGE_PASSWORD) and ends their sessions. Cognito emails
   * it (a new invitation: AdminSetUserPassword, then AdminCreateUser with RESEND); locally it is returned, to be shown
   * once.
   * @returns undefined when there is no such user.
   */
  resetPassword(username: string): Promise<{ temporaryPassword?: string } | undefined>;
  /** Users holding `company` (a company's `userCount`). */
  countInCompany(company: string): Promise<number>;
  /**
   * Users whose role is `platform-admin`, enabled, who have set their own password (CONFIRMED): the last one cannot be
   * demoted, disabled or deleted. An invited admin who never signed in does not count: their temporary password lapses.
   */
  countActivePlatformAdmins(): Promise<number>;
}
