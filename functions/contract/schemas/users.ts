/** Bodies and parameters of users administration (`/admin/users`). */
import * as z from 'zod';
import { ROLE_NAMES, type Role } from '../../core/access/roles.js';
import { MAX_COMPANIES_TEXT_LENGTH, MAX_EMAIL_LENGTH, MAX_USER_COMPANIES, USERNAME_PATTERN } from '../../core/users/admin.js';
import { companyIdentifier } from './companies.js';

/** The rule a username follows, as a 400 states it. */
export const USERNAME_RULE = 'A username is 1 to 128 letters, digits, ".", "_", "@" or "-", starting with a letter or digit.';

/**
 * How every administration route reads its caller, as its 403 states it: the token bounded by the caller's user as it
 * is now (functions/core/users/current-administrator.ts).
 */
export const CURRENT_CALLER_RULE =
  "The token is bounded by the caller's user as it is now, not as the token was issued: a caller disabled, deleted or demoted since (their role no longer granting the scope) is 403 too.";

/** A username, as a body member or path parameter. */
export const username = z.string().regex(USERNAME_PATTERN, { error: USERNAME_RULE });

const roleRule = `The role must be one of ${ROLE_NAMES.join(', ')}.`;

/** A role name. */
export const role = z
  .enum(ROLE_NAMES as [Role, ...Role[]], { error: roleRule })
  .describe(
    `One of ${ROLE_NAMES.join(', ')} (lowest first; each holds every scope of the ones before it). A company admin gives at most their own role.`,
  );

const companies = z
  .array(companyIdentifier)
  .max(MAX_USER_COMPANIES, { error: `A user holds at most ${MAX_USER_COMPANIES} companies.` })
  .refine((ids) => new Set(ids).size === ids.length, { error: 'Name each company once.' })
  .refine((ids) => ids.join(',').length <= MAX_COMPANIES_TEXT_LENGTH, {
    error: `The companies take at most ${MAX_COMPANIES_TEXT_LENGTH} characters joined by commas (the user directory's limit).`,
  })
  .describe(
    `Ids of existing companies the user acts on, 0 to ${MAX_USER_COMPANIES} (at most ${MAX_COMPANIES_TEXT_LENGTH} characters joined by commas): at least one for every role but platform-admin. A company admin names only their own.`,
  );

const email = z
  .email({ error: 'The email must be an email address.' })
  .max(MAX_EMAIL_LENGTH, { error: `The email must be at most ${MAX_EMAIL_LENGTH} characters.` })
  .describe(`Where the invitation and password resets are sent (at most ${MAX_EMAIL_LENGTH} characters).`);

/** Body of `POST /admin/users`. */
export const UserCreateBody = z
  .strictObject({ username: username.describe(`Fixed for good. ${USERNAME_RULE}`), email, role, companies })
  .meta({ id: 'UserCreateBody', description: 'A user to invite: username, email, role and companies.' });

/** Body of `PATCH /admin/users/{username}`: at least one member. */
export const UserUpdateBody = z
  .strictObject({
    role: role.optional(),
    companies: companies.optional(),
    enabled: z.boolean().optional().describe('false: the user cannot sign in, and their refresh tokens are refused from now on.'),
  })
  .refine((body) => body.role !== undefined || body.companies !== undefined || body.enabled !== undefined, {
    error: 'Give `role`, `companies` or `enabled` (or several).',
  })
  .meta({ id: 'UserUpdateBody', description: 'What to change (at least one member; the others are kept).' });

/** A user as administration answers it. */
export const User = z
  .object({
    username: z.string().describe('Fixed for good.'),
    email: z.string().describe('Where invitations and resets are sent (empty for a local demo user of an older data folder).'),
    role: z.enum(ROLE_NAMES as [Role, ...Role[]]).describe('The role; the token carries its scopes.'),
    companies: z.array(z.string()).describe('Company ids the user acts on (the `companies` claim of their tokens).'),
    enabled: z.boolean().describe('false: the user cannot sign in, and their refresh tokens are refused.'),
    disabledBy: z
      .object({
        username: z.string().describe('The administrator who disabled the user.'),
        role: z.enum(ROLE_NAMES as [Role, ...Role[]]).describe('The role they acted with.'),
      })
      .strict()
      .optional()
      .describe(
        'While the user is disabled: who disabled them. A user a platform-admin disabled is enabled again, reset or deleted only by a platform-admin (403 for a company-admin). Absent for a user disabled before this was recorded.',
      ),
    status: z
      .enum(['FORCE_CHANGE_PASSWORD', 'CONFIRMED'])
      .describe('`FORCE_CHANGE_PASSWORD`: invited or reset, sets a new password at the next sign-in; `CONFIRMED`: has set their own.'),
    createdAt: z.string().describe('ISO-8601.'),
    updatedAt: z.string().describe('ISO-8601.'),
  })
  .strict()
  .meta({ id: 'User', description: 'A user, their role and companies. Never a password.' });

const temporaryPassword = z
  .string()
  .describe(
    'Locally only, shown this once: the temporary password to hand the user, who sets their own at the first sign-in. On AWS Cognito emails it, and it is absent.',
  );

/** Answer of `POST /admin/users`. */
export const UserInvitation = z
  .object({ user: User, temporaryPassword: temporaryPassword.optional() })
  .strict()
  .meta({ id: 'UserInvitation', description: 'The invited user (status FORCE_CHANGE_PASSWORD).' });

/** Answer of `POST /admin/users/{username}/reset-password`. */
export const PasswordReset = z
  .object({ temporaryPassword: temporaryPassword.optional() })
  .strict()
  .meta({ id: 'PasswordReset', description: "The user's sessions are ended; they set a new password at the next sign-in." });

/** A page of the users listing. */
export const UserPage = z
  .object({
    items: z
      .array(User)
      .describe(
        'Sorted by username (locally the whole listing is; on AWS each page); a page may hold fewer than `limit` users and still have a next one.',
      ),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'UserPage' });
