/**
 * The device registry's bodies: a device's static fields (PUT), bulk registration entries and results, issued
 * credentials. The device resource answered is the search result's (DeviceSearchResource).
 */
import * as z from 'zod';
import {
  DEVICE_ID_RULE,
  type DeviceRegistration,
  type InvalidRegistration,
  MAX_REGISTRATION_ENTRIES,
} from '../../core/devices/registry.js';
import { displayText } from '../../core/shared/display-text.js';
import type { ProblemViolation as Violation } from '../../core/shared/errors.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { ProblemViolation } from './problems.js';

/** Longest serial number, characters. */
export const MAX_SERIAL_LENGTH = 256;
/** Longest `location.name`, characters. */
export const MAX_LOCATION_NAME_LENGTH = 256;
/** Longest `location.description`, characters. */
export const MAX_LOCATION_DESCRIPTION_LENGTH = 2_000;

const coordinate = (description: string, bound: number) => z.number().min(-bound).max(bound).meta({ format: 'double', description });

/** The static fields of a device: what its operator sets. */
const staticFields = {
  serial: displayText(z.string().min(1).max(MAX_SERIAL_LENGTH), 'line')
    .describe('Serial number, one line without control characters. Required to register a new device.')
    .optional(),
  location: z
    .strictObject({
      name: displayText(z.string().max(MAX_LOCATION_NAME_LENGTH), 'line')
        .describe('Short location text, one line without control characters.')
        .optional(),
      description: displayText(z.string().max(MAX_LOCATION_DESCRIPTION_LENGTH), 'prose')
        .describe('Long location text; line breaks and tabs are its only control characters.')
        .optional(),
    })
    .describe('Where the device stands; replaces the stored location whole.')
    .optional(),
  geoLocation: z
    .strictObject({
      latitude: coordinate('Latitude, degrees (-90 to 90).', 90).optional(),
      longitude: coordinate('Longitude, degrees (-180 to 180).', 180).optional(),
      altitude: coordinate('Altitude, metres (-100,000 to 100,000).', 100_000).optional(),
    })
    .describe('Coordinates of the device; replaces the stored ones whole.')
    .optional(),
};

export const DeviceBody = z.strictObject(staticFields).meta({
  id: 'DeviceBody',
  description:
    'The static fields of a device. Registering a new device needs `serial`; on an existing device, members left out are kept, and `location` or `geoLocation` given replace the stored object whole. Health and connection are reported by the device itself.',
  examples: [{ serial: 'SN-0001-A', location: { name: 'Entrance', description: 'Left of the main door' } }],
});

export const DeviceRegistrationEntry = z
  .strictObject({ id: z.string().regex(IDENTIFIER_PATTERN, DEVICE_ID_RULE).describe('Device identifier.'), ...staticFields })
  .meta({ id: 'DeviceRegistrationEntry', description: 'One device of a bulk registration: its id and static fields (see DeviceBody).' });

/** A zod issue as a violation inside the entry (JSON pointer; an unknown member is named by its own pointer). */
function entryViolations(issues: readonly z.core.$ZodIssue[]): Violation[] {
  return issues.flatMap((issue) =>
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: `/${[...issue.path, key].join('/')}`, message: `Unknown member '${key}'.` }))
      : [{ path: issue.path.length === 0 ? '' : `/${issue.path.join('/')}`, message: issue.message }],
  );
}

/**
 * The bulk registration body: an array of entries, each validated on its own. An entry its schema refuses becomes
 * an InvalidRegistration (reported FAILURE with its errors) instead of refusing the request, so the others proceed.
 */
export const DeviceRegistrationBody = z
  .array(
    // Widened to what the catch may give (an entry, or the violations of one that is not valid).
    (DeviceRegistrationEntry as z.ZodType<DeviceRegistration | InvalidRegistration, z.input<typeof DeviceRegistrationEntry>>).catch(
      (context): InvalidRegistration => ({
        invalid: entryViolations(context.error.issues),
        id: typeof (context.input as { id?: unknown } | null)?.id === 'string' ? (context.input as { id: string }).id : null,
      }),
    ),
  )
  .max(MAX_REGISTRATION_ENTRIES)
  .meta({
    id: 'DeviceRegistrationBody',
    description: `Up to ${withThousandsSeparators(MAX_REGISTRATION_ENTRIES)} devices to register or update. An entry that is not valid is reported FAILURE with its errors; the others proceed.`,
  });

/** The 413 check of a bulk registration, on the parsed JSON before its schema. */
export function registrationTooLarge(body: unknown): string | undefined {
  if (!Array.isArray(body) || body.length <= MAX_REGISTRATION_ENTRIES) return undefined;
  return `The request has ${body.length} entries; at most ${MAX_REGISTRATION_ENTRIES} are accepted per request. Split it; nothing was changed.`;
}

export const DeviceRegistrationResult = z
  .strictObject({
    id: z.string().nullable().describe("The entry's `id`; null when the entry has no string `id`."),
    state: z
      .enum(['CREATED', 'UPDATED', 'FAILURE'])
      .describe('CREATED (new device), UPDATED (existing device), FAILURE (nothing written).'),
    errors: z
      .array(ProblemViolation)
      .min(1)
      .optional()
      .describe('On FAILURE: why, each with a JSON pointer into the request body (`/3/serial`).'),
  })
  .meta({ id: 'DeviceRegistrationResult' });

export const DeviceRegistrationResults = z
  .array(DeviceRegistrationResult)
  .meta({ id: 'DeviceRegistrationResults', description: 'One result per entry, in request order (as the request is an array).' });

export const DeviceCredentials = z
  .strictObject({
    clientId: z.string().describe('The OAuth client id of the device: `{companyId}~{deviceId}`.'),
    clientSecret: z.string().describe('The client secret (43 characters, base64url of 32 random bytes). Shown this once; keep it secret.'),
  })
  .meta({
    id: 'DeviceCredentials',
    description: 'Client credentials of a device, for the client credentials grant at `POST {auth_url}/token`.',
  });
