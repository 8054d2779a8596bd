/**
 * Commands (docs/contract.md, "Commands"): run a command a sub-device advertises, read, list and cancel commands; and
 * the device's report of a command's result.
 */
import * as z from 'zod';
import { MAX_COMMAND_JSON_BYTES } from '../../core/commands/model.js';
import { DEVICE_SCOPE } from '../../core/shared/principal.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { companyId, ListQuery, NoQuery, pathId } from '../parameters.js';
import { defineRoute, type FunctionAccess } from '../route.js';
import { Command, CommandCreateBody, CommandPage, CommandStatusBody } from '../schemas/commands.js';
import { CommandNotAdvertisedProblem, ConflictProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';

const deviceId = pathId('deviceId', 'A device of the company.');
const commandId = pathId('commandId', 'A command of the device (its ULID).');
const DeviceParams = z.object({ companyId, deviceId });
const CommandParams = z.object({ companyId, deviceId, commandId });

const COMMANDS_PATH = '/companies/{companyId}/resources/devices/{deviceId}/commands';
const COMMAND_PATH = `${COMMANDS_PATH}/{commandId}`;
const ENTRY = 'functions/handlers/device-commands.ts';
// The four routes share one function: the device read (exists? advertises?), the command writes and the listing.
const ACCESS: FunctionAccess = { storage: true, pagesListings: true, tables: { devices: 'R', commands: 'RW' } };
const deviceNotFound = problem('NotFound', 'The device does not exist in the company (or is being deleted).');
const commandNotFound = problem('NotFound', 'The device has no such command.');
const LIFECYCLE =
  'A command is QUEUED until the device pulls it with its desired state (`GET /device/deployments`, whose `ETag` changes when a command is queued), DELIVERED once fetched, then SUCCEEDED or FAILED as the device reports, EXPIRED when not final at `expiresAt`, or CANCELLED.';

/** POST /companies/{companyId}/resources/devices/{deviceId}/commands */
export const commandCreate = defineRoute({
  id: 'CommandCreate',
  api: 'main',
  method: 'POST',
  path: COMMANDS_PATH,
  summary: 'Run a command on a sub-device',
  description: `Queues a command for one sub-device of the device, which must advertise it in the device's latest health report (\`health.hubs[].devices[].commands[]\`; otherwise 409 with \`cause\` COMMAND_NOT_ADVERTISED, and nothing is written). \`arguments\` (any JSON, at most ${withThousandsSeparators(MAX_COMMAND_JSON_BYTES)} bytes) are kept and delivered as sent. Answers 202 with the command and its address in \`Location\`. ${LIFECYCLE} Needs \`devices:write\` on the company.`,
  tags: ['Commands'],
  scope: 'devices:write',
  companyParameter: 'companyId',
  request: {
    params: DeviceParams,
    query: NoQuery,
    body: { kind: 'json', schema: CommandCreateBody, invalidDetail: 'The command is invalid; nothing was queued.' },
  },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    202: {
      description: 'Queued: the command, QUEUED.',
      schema: Command,
      headers: { Location: { ...HEADERS.Location, description: 'Address of the command (`GET` it to follow its state).' } },
    },
    ...AUTHENTICATED_PROBLEMS,
    404: deviceNotFound,
    409: {
      description: 'Conflict: the sub-device does not advertise the command; nothing was queued.',
      schema: CommandNotAdvertisedProblem,
    },
  },
});

/** GET /companies/{companyId}/resources/devices/{deviceId}/commands */
export const commandsList = defineRoute({
  id: 'CommandsList',
  api: 'main',
  method: 'GET',
  path: COMMANDS_PATH,
  summary: 'List the commands of a device',
  description: `Every command run on the device, newest first. ${LIFECYCLE} Needs \`devices:read\` on the company.`,
  tags: ['Commands'],
  scope: 'devices:read',
  companyParameter: 'companyId',
  request: { params: DeviceParams, query: ListQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'A page of commands, newest first.', schema: CommandPage },
    ...AUTHENTICATED_PROBLEMS,
    404: deviceNotFound,
  },
});

/** GET /companies/{companyId}/resources/devices/{deviceId}/commands/{commandId} */
export const commandGet = defineRoute({
  id: 'CommandGet',
  api: 'main',
  method: 'GET',
  path: COMMAND_PATH,
  summary: 'Get a command',
  description: `The command, its state and, once the device reported it, its result. ${LIFECYCLE} Needs \`devices:read\` on the company.`,
  tags: ['Commands'],
  scope: 'devices:read',
  companyParameter: 'companyId',
  request: { params: CommandParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'The command.', schema: Command },
    ...AUTHENTICATED_PROBLEMS,
    404: commandNotFound,
  },
});

/** POST /companies/{companyId}/resources/devices/{deviceId}/commands/{commandId}/cancel */
export const commandCancel = defineRoute({
  id: 'CommandCancel',
  api: 'main',
  method: 'POST',
  path: `${COMMAND_PATH}/cancel`,
  summary: 'Cancel a command',
  description:
    'A QUEUED or DELIVERED command becomes CANCELLED: it leaves the device’s desired state (a device that fetched it learns by its next pull, where it is gone), and a result reported afterwards is refused. Needs `devices:write` on the company.',
  tags: ['Commands'],
  scope: 'devices:write',
  companyParameter: 'companyId',
  request: { params: CommandParams, query: NoQuery },
  access: ACCESS,
  entry: ENTRY,
  responses: {
    200: { description: 'The command, CANCELLED.', schema: Command },
    ...AUTHENTICATED_PROBLEMS,
    404: commandNotFound,
    409: { description: 'Conflict: the command is already final (SUCCEEDED, FAILED, EXPIRED or CANCELLED).', schema: ConflictProblem },
  },
});

/** POST /device/commands/{commandId}/status */
export const deviceCommandStatusPost = defineRoute({
  id: 'DeviceCommandStatusPost',
  api: 'main',
  method: 'POST',
  path: '/device/commands/{commandId}/status',
  summary: 'Report the result of one of the calling device’s commands',
  description: `The device reports SUCCEEDED or FAILED for a command it pulled, with an optional message and \`output\` (any JSON, at most ${withThousandsSeparators(MAX_COMMAND_JSON_BYTES)} bytes). Recorded once: a command already final, or past its \`expiresAt\`, is 409. Only for device tokens (scope \`device\`); a user token gets 403.`,
  tags: ['Devices', 'Commands'],
  scope: DEVICE_SCOPE,
  request: {
    params: z.object({ commandId: pathId('commandId', 'A command of the calling device (the `id` its pull carried).') }),
    query: NoQuery,
    body: { kind: 'json', schema: CommandStatusBody, invalidDetail: 'The command result is invalid; nothing was recorded.' },
  },
  // Checks the device (its token), then one conditional UpdateItem of the command.
  access: { storage: true, tables: { devices: 'R', commands: 'W' } },
  entry: 'functions/handlers/device-command-status-post.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    204: { description: 'Recorded.' },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The command is not one of the calling device’s; nothing was recorded.'),
    409: { description: 'Conflict: the command is already final, or expired; nothing was recorded.', schema: ConflictProblem },
  },
});
