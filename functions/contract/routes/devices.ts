/** The device registry of the main address: register, read, delete devices and issue their client credentials. */
import * as z from 'zod';
import { DEVICE_ID_RULE, MAX_REGISTRATION_ENTRIES } from '../../core/devices/registry.js';
import { IDENTIFIER_PATTERN } from '../../core/shared/identifiers.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { CompanyParams, companyId, pathId } from '../parameters.js';
import { defineRoute } from '../route.js';
import {
  DeviceBody,
  DeviceCredentials,
  DeviceRegistrationBody,
  DeviceRegistrationResults,
  registrationTooLarge,
} from '../schemas/devices.js';
import { ConflictProblem, PayloadTooLargeProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem } from '../schemas/responses.js';
import { DeviceSearchResource } from '../schemas/search.js';

const deviceId = pathId('deviceId', 'A device of the company.');

/** `{deviceId}` of a device being registered: a device id (IDENTIFIER_PATTERN). */
const newDeviceId = z
  .string()
  .regex(IDENTIFIER_PATTERN, { error: DEVICE_ID_RULE })
  .meta({ description: 'The device to register or update: 1 to 128 letters, digits, `.`, `_` or `-`, starting with a letter or digit.' });

const DEVICE_PATH = '/companies/{companyId}/resources/devices/{deviceId}';
const notFound = problem('NotFound', 'The device does not exist in the company (or is being deleted).');

/** PUT /companies/{companyId}/resources/devices/{deviceId} */
export const devicePut = defineRoute({
  id: 'DevicePut',
  api: 'main',
  method: 'PUT',
  path: DEVICE_PATH,
  summary: 'Register or update a device',
  description:
    'Registers the device (201; `serial` required) or sets its static fields (200; members left out are kept). A new device has `connection.state` UNKNOWN and no `health` until it reports. Answers the device resource. Needs `devices:write` on the company.',
  tags: ['Devices'],
  scope: 'devices:write',
  companyParameter: 'companyId',
  request: {
    params: z.object({ companyId, deviceId: newDeviceId }),
    body: { kind: 'json', schema: DeviceBody, invalidDetail: 'The device body is invalid; nothing was changed.' },
  },
  // A conditional put (new device) or update (existing one), and a read to tell an absent device from a deleting one.
  access: { storage: true, tables: { devices: 'RW' } },
  entry: 'functions/handlers/device-put.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'The device was updated; its resource.', schema: DeviceSearchResource },
    201: { description: 'The device was registered; its resource.', schema: DeviceSearchResource },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      'Bad Request: a device id that is not 1 to 128 letters, digits, `.`, `_` or `-`, or that is a path segment of the API after `resources/` (`DEVICE`, `devices`, `deployments`, `scenarios`, `rollouts`, `search`, …), a body that is not valid, or a new device without `serial`. Nothing was changed.',
    ),
    409: {
      description: 'Conflict: the device is being deleted; register it again once the delete has completed.',
      schema: ConflictProblem,
    },
  },
});

/** GET /companies/{companyId}/resources/devices/{deviceId} */
export const deviceGet = defineRoute({
  id: 'DeviceGet',
  api: 'main',
  method: 'GET',
  path: DEVICE_PATH,
  summary: 'Get a device',
  description: 'The device resource, with its latest health and connection state. Needs `devices:read` on the company.',
  tags: ['Devices'],
  scope: 'devices:read',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, deviceId }) },
  access: { storage: true, tables: { devices: 'R' } },
  entry: 'functions/handlers/device-get.ts',
  responses: {
    200: { description: 'The device.', schema: DeviceSearchResource },
    ...AUTHENTICATED_PROBLEMS,
    404: notFound,
  },
});

/** DELETE /companies/{companyId}/resources/devices/{deviceId} */
export const deviceDelete = defineRoute({
  id: 'DeviceDelete',
  api: 'main',
  method: 'DELETE',
  path: DEVICE_PATH,
  summary: 'Delete a device',
  description:
    'Deletes the device: at once it counts as absent (deployments to it report TARGET_NOT_FOUND, reads 404), its credentials and tokens stop working and it leaves search; each of its active deployments is undeployed, recorded in the history as an UNDEPLOY by the caller with cause `DEVICE_DELETED`. A delete interrupted half-way is completed by sending it again. Needs `devices:write` on the company.',
  tags: ['Devices'],
  scope: 'devices:write',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, deviceId }) },
  // Marks and deletes the device, pages and undeploys its active deployments, cancels its pending commands, deletes its
  // presence item.
  access: { storage: true, pagesListings: true, tables: { devices: 'W', deployments: 'RW', presence: 'W', commands: 'RW' } },
  entry: 'functions/handlers/device-delete.ts',
  responses: {
    204: { description: 'The device is deleted.' },
    ...AUTHENTICATED_PROBLEMS,
    404: notFound,
  },
});

/** POST /companies/{companyId}/resources/devices */
export const devicesRegister = defineRoute({
  id: 'DevicesRegister',
  api: 'main',
  method: 'POST',
  path: '/companies/{companyId}/resources/devices',
  summary: 'Register or update many devices',
  description: `Registers or updates each device of the array (at most ${withThousandsSeparators(MAX_REGISTRATION_ENTRIES)}) as PUT does, and reports one result per entry, in request order: CREATED, UPDATED, or FAILURE with \`errors\` (an entry that is not valid, a new device without \`serial\`, a device being deleted, a database failure on that entry). The other entries proceed, and the status stays 200. Entries with the same id run one after another, in order. Needs \`devices:write\` on the company.`,
  tags: ['Devices'],
  scope: 'devices:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    body: {
      kind: 'json',
      schema: DeviceRegistrationBody,
      tooLarge: registrationTooLarge,
      invalidDetail: 'The body must be a JSON array of devices; nothing was changed.',
    },
  },
  access: { storage: true, tables: { devices: 'RW' } },
  entry: 'functions/handlers/devices-register.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: { description: 'One result per entry.', schema: DeviceRegistrationResults },
    ...AUTHENTICATED_PROBLEMS,
    400: problem('BadRequest', 'Bad Request: the body is not a JSON array. Nothing was changed.'),
    413: {
      description: `Content Too Large: more than ${withThousandsSeparators(MAX_REGISTRATION_ENTRIES)} entries, or a body above the address's limit; split the request. Nothing was changed.`,
      schema: PayloadTooLargeProblem,
    },
  },
});

/** POST /companies/{companyId}/resources/devices/{deviceId}/credentials */
export const deviceCredentialsIssue = defineRoute({
  id: 'DeviceCredentialsIssue',
  api: 'main',
  method: 'POST',
  path: `${DEVICE_PATH}/credentials`,
  summary: 'Issue client credentials for a device',
  description:
    "Issues a new client id and secret for the device's client credentials grant (`POST {auth_url}/token`). The secret is shown this once and stored only as a scrypt hash; it replaces any earlier secret, which stops working at once, with every token issued for it. Needs `devices:write` on the company.",
  tags: ['Devices'],
  scope: 'devices:write',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, deviceId }) },
  // One conditional update of the device item.
  access: { storage: true, tables: { devices: 'W' } },
  entry: 'functions/handlers/device-credentials-issue.ts',
  responses: {
    201: {
      description: 'The new credentials.',
      schema: DeviceCredentials,
      headers: { 'Cache-Control': HEADERS['Cache-Control'] },
    },
    ...AUTHENTICATED_PROBLEMS,
    404: notFound,
  },
});
