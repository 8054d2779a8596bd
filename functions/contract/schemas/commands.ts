/** Bodies of the commands routes (docs/contract.md, "Commands"). */
import * as z from 'zod';
import {
  COMMAND_RESULT_STATES,
  COMMAND_STATES,
  DEFAULT_COMMAND_EXPIRY_SECONDS,
  MAX_COMMAND_EXPIRY_SECONDS,
  MAX_COMMAND_JSON_BYTES,
  MAX_COMMAND_MESSAGE_LENGTH,
  MAX_COMMAND_NOTE_LENGTH,
  MIN_COMMAND_EXPIRY_SECONDS,
} from '../../core/commands/model.js';
import { HEALTH_LIMITS } from '../../core/devices/health.js';
import { displayText } from '../../core/shared/display-text.js';
import { ULID_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';

const dateTime = (description: string) => z.iso.datetime({ offset: true }).describe(description);
/** A name from a health report: what the report's own schema accepts (HEALTH_LIMITS.shortText, one line). */
export const healthName = (description: string) =>
  displayText(z.string().min(1).max(HEALTH_LIMITS.shortText), 'line').describe(description);

const encoder = new TextEncoder();

/** Free JSON of at most MAX_COMMAND_JSON_BYTES, serialized without white space. */
export function boundedJson(description: string) {
  return z
    .unknown()
    .refine((value) => value === undefined || encoder.encode(JSON.stringify(value)).length <= MAX_COMMAND_JSON_BYTES, {
      error: `must be at most ${withThousandsSeparators(MAX_COMMAND_JSON_BYTES)} bytes of JSON (serialized without white space)`,
    })
    .describe(
      `${description} Any JSON of at most ${withThousandsSeparators(MAX_COMMAND_JSON_BYTES)} bytes (serialized without white space).`,
    );
}

export const CommandState = z.enum(COMMAND_STATES).meta({
  id: 'CommandState',
  description:
    'QUEUED (waiting for the device to pull it), DELIVERED (the device fetched it), then one final state: SUCCEEDED or FAILED (the device reported it), EXPIRED (not final at `expiresAt`) or CANCELLED.',
});

export const CommandCreateBody = z
  .strictObject({
    hub: healthName('The `uid` of the hub, in the device’s latest health report.'),
    device: healthName('The `uid` of the sub-device within that hub.'),
    command: healthName('The name of a command the sub-device advertises (`health.hubs[].devices[].commands[].command`).'),
    arguments: boundedJson('Arguments for the command, kept and delivered as sent.').optional(),
    expiresInSeconds: z
      .int()
      .min(MIN_COMMAND_EXPIRY_SECONDS)
      .max(MAX_COMMAND_EXPIRY_SECONDS)
      .optional()
      .describe(
        `Seconds until a command that is not final becomes EXPIRED, ${MIN_COMMAND_EXPIRY_SECONDS} to ${withThousandsSeparators(MAX_COMMAND_EXPIRY_SECONDS)} (7 days); default ${withThousandsSeparators(DEFAULT_COMMAND_EXPIRY_SECONDS)}.`,
      ),
    note: z
      .string()
      .max(MAX_COMMAND_NOTE_LENGTH)
      .optional()
      .describe(`Why it was run, at most ${withThousandsSeparators(MAX_COMMAND_NOTE_LENGTH)} characters.`),
  })
  .meta({
    id: 'CommandCreate',
    examples: [{ hub: 'hub-1', device: 'printer-1', command: 'PRINT_TEST_PAGE', arguments: { copies: 1 }, expiresInSeconds: 600 }],
  });

export const CommandResult = z
  .object({
    message: z.string().optional().describe('What the device said.'),
    output: z.unknown().optional().describe('What the device returned (any JSON).'),
  })
  .strict()
  .meta({ id: 'CommandResult' });

export const Command = z
  .object({
    id: z.string().regex(ULID_PATTERN).describe('ULID: sorts by creation time.'),
    target: z
      .object({
        type: z.literal('DEVICE'),
        id: z.string().describe('The device.'),
        subId: z.string().describe('`{hub uid}/{sub-device uid}`.'),
      })
      .strict(),
    command: z.string(),
    arguments: z.unknown().describe('As sent; null when none were.'),
    state: CommandState,
    created: dateTime('ISO-8601.'),
    updated: dateTime('ISO-8601: the last change of state.'),
    expiresAt: dateTime('ISO-8601: a command not final then becomes EXPIRED.'),
    by: z.string().describe('Who ran it: a username (for a command a rollout queued, the rollout’s creator).'),
    note: z.string().optional(),
    result: CommandResult.optional().describe('What the device reported with SUCCEEDED or FAILED.'),
    rolloutId: z.string().optional().describe('The rollout that queued it (a COMMAND rollout).'),
  })
  .strict()
  .meta({ id: 'Command', description: 'A command run on one sub-device of a device.' });

export const CommandPage = z
  .object({
    items: z.array(Command).describe('Newest first.'),
    nextCursor: z.string().nullable().describe('Pass as `cursor` to get the next page; null on the last page.'),
  })
  .strict()
  .meta({ id: 'CommandPage' });

export const PendingCommand = z
  .object({
    id: z.string().regex(ULID_PATTERN).describe('Report its result with `POST /device/commands/{id}/status`.'),
    hub: z.string().describe('The hub’s `uid`.'),
    device: z.string().describe('The sub-device’s `uid`.'),
    command: z.string(),
    arguments: z.unknown().describe('As the operator sent them; null when none were.'),
    created: dateTime('ISO-8601.'),
    expiresAt: dateTime('ISO-8601: report the result before then.'),
  })
  .strict()
  .meta({ id: 'PendingCommand', description: 'A command for the calling device to run.' });

export const CommandStatusBody = z
  .strictObject({
    state: z.enum(COMMAND_RESULT_STATES).describe('SUCCEEDED or FAILED.'),
    message: displayText(z.string().max(MAX_COMMAND_MESSAGE_LENGTH), 'prose')
      .optional()
      .describe(
        `Free text, at most ${withThousandsSeparators(MAX_COMMAND_MESSAGE_LENGTH)} characters (e.g. why it FAILED); tab, line feed and carriage return are its only control characters.`,
      ),
    output: boundedJson('What the command returned.').optional(),
  })
  .meta({ id: 'CommandStatusReport', examples: [{ state: 'SUCCEEDED', message: 'Printed 1 page.' }] });
