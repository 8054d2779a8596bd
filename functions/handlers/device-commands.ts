import { commandCancel, commandCreate, commandGet, commandsList } from '../contract/routes/commands.js';
import { cancelCommand, createCommand, getCommand, listCommands } from '../core/commands/commands.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

const create = routeHandler(commandCreate, async ({ params, body }, { principal }) => {
  const { devices, commands } = storage();
  const command = await createCommand({ devices, commands }, principal, params.companyId, params.deviceId, body);
  const path = `/companies/${encodeURIComponent(params.companyId)}/resources/devices/${encodeURIComponent(params.deviceId)}/commands/${command.id}`;
  return jsonResponse(202, command, { location: path });
});

const list = routeHandler(commandsList, async ({ params, query }, { principal }) => {
  const { devices, commands } = storage();
  return jsonResponse(200, await listCommands({ devices, commands }, principal, params.companyId, params.deviceId, query));
});

const get = routeHandler(commandGet, async ({ params }, { principal }) => {
  const { commands } = storage();
  return jsonResponse(200, await getCommand({ commands }, principal, params.companyId, params.deviceId, params.commandId));
});

const cancel = routeHandler(commandCancel, async ({ params }, { principal }) => {
  const { commands } = storage();
  return jsonResponse(200, await cancelCommand({ commands }, principal, params.companyId, params.deviceId, params.commandId));
});

/**
 * The commands routes of a device, one function for the four: POST …/devices/{deviceId}/commands (202 with
 * `Location`; 409 when not advertised), GET …/commands (`{ items, nextCursor }`, newest first), GET
 * …/commands/{commandId} and POST …/commands/{commandId}/cancel (409 once final).
 */
export const handler = routeDispatcher([
  [commandCreate, create],
  [commandsList, list],
  [commandGet, get],
  [commandCancel, cancel],
]);
