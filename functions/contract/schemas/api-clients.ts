/** Bodies of API clients administration (`/admin/api-clients`). */
import * as z from 'zod';
import {
  API_CLIENT_ID_PATTERN,
  API_CLIENT_ROLES,
  MAX_API_CLIENT_NAME_LENGTH,
  MAX_PREVIOUS_SECRET_SECONDS,
} from '../../core/clients/model.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { companyIdentifier } from './companies.js';

/** The rule a client id follows, as a 400 states it. */
export const API_CLIENT_ID_RULE = 'A client id is `api_` and a ULID (26 characters of Crockford base32).';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);

const roleRule = `The role must be one of ${API_CLIENT_ROLES.join(', ')}.`;

/** A client's role. */
const role = z
  .enum(API_CLIENT_ROLES, { error: roleRule })
  .describe(
    '`viewer`: reads and searches the company; `operator`: also deploys, uploads, changes devices and alert rules. A client never administers.',
  );

const name = z
  .string()
  .trim()
  .min(1, { error: 'The name must not be empty.' })
  .max(MAX_API_CLIENT_NAME_LENGTH, { error: `The name must be at most ${MAX_API_CLIENT_NAME_LENGTH} characters.` })
  .describe(`What the client is for (shown to administrators), 1 to ${MAX_API_CLIENT_NAME_LENGTH} characters.`);

/** Body of `POST /admin/api-clients`. */
export const ApiClientCreateBody = z
  .strictObject({
    name,
    company: companyIdentifier.describe('The one company the client acts for: an existing one, one of a company admin’s own.'),
    role,
  })
  .meta({ id: 'ApiClientCreate', description: 'A new API client: its name, its company and its role.' });

/** Body of `PATCH /admin/api-clients/{clientId}`: at least one member. */
export const ApiClientUpdateBody = z
  .strictObject({
    name: name.optional(),
    role: role.optional(),
    enabled: z
      .boolean()
      .optional()
      .describe('false: the client gets no token, and the tokens it holds stop working within 30 seconds and one request.'),
  })
  .refine((body) => body.name !== undefined || body.role !== undefined || body.enabled !== undefined, {
    error: 'Give `name`, `role` or `enabled` (or several).',
  })
  .meta({ id: 'ApiClientUpdate', description: 'What to change (at least one member; the others are kept).' });

/** Body of `POST /admin/api-clients/{clientId}/secret` (optional). */
export const ApiClientRotateBody = z
  .strictObject({
    previousSecretValidSeconds: z
      .int({ error: 'previousSecretValidSeconds must be a whole number of seconds.' })
      .min(0, { error: 'previousSecretValidSeconds must be at least 0.' })
      .max(MAX_PREVIOUS_SECRET_SECONDS, {
        error: `previousSecretValidSeconds must be at most ${withThousandsSeparators(MAX_PREVIOUS_SECRET_SECONDS)} (24 hours).`,
      })
      .optional()
      .describe(
        `How long the secret being replaced keeps working, seconds, 0 to ${withThousandsSeparators(MAX_PREVIOUS_SECRET_SECONDS)}; default ${withThousandsSeparators(MAX_PREVIOUS_SECRET_SECONDS)} (24 hours). 0: it stops at once.`,
      ),
  })
  .meta({ id: 'ApiClientRotate', description: 'How the rotation overlaps the secrets; the body may be absent.' });

/** A client as administration answers it. */
export const ApiClient = z
  .object({
    clientId: z.string().regex(API_CLIENT_ID_PATTERN).describe('The client id (`api_` and a ULID): the `client_id` of its token requests.'),
    name: z.string().describe('What the client is for.'),
    company: z.string().describe('The one company its tokens act for.'),
    role: z.enum(API_CLIENT_ROLES).describe('The role; its tokens carry its scopes.'),
    enabled: z.boolean().describe('false: the client gets no token, and its live tokens stop working.'),
    created: dateTime('When it was created (ISO-8601).'),
    createdBy: z.string().describe('Who created it: a username, or `client:{clientId}`.'),
    updated: dateTime('When it was last changed or its secret rotated (ISO-8601).'),
    lastUsedAt: dateTime(
      'Its last token or request, to the minute (at most one write a minute): absent when it was never used.',
    ).optional(),
    previousSecretExpiresAt: dateTime(
      'Until when the secret before the last rotation still works (ISO-8601); absent when there is none.',
    ).optional(),
  })
  .strict()
  .meta({ id: 'ApiClient', description: 'An API client of one company. Never its secret.' });

/** A client with its new secret: the answer of a create or a rotation. */
export const ApiClientWithSecret = ApiClient.extend({
  clientSecret: z
    .string()
    .describe('The client secret (43 characters), shown this once: only its hash is kept. Store it in the integrator’s secret store.'),
})
  .strict()
  .meta({ id: 'ApiClientWithSecret', description: 'An API client and its new secret, shown this once.' });

/** A page of the clients listing. */
export const ApiClientPage = z
  .object({
    items: z.array(ApiClient).describe('In id (creation) order.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'ApiClientPage' });
