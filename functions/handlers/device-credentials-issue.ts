import { deviceCredentialsIssue } from '../contract/routes/devices.js';
import { issueDeviceCredentials } from '../core/devices/registry.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';

/**
 * POST {base_url}/companies/{companyId}/resources/devices/{deviceId}/credentials: 201 `{ clientId, clientSecret }`,
 * never cached (the secret is shown once); 404 when the device is absent.
 */
export const handler = routeHandler(deviceCredentialsIssue, async ({ params }, { principal }) =>
  jsonResponse(201, await issueDeviceCredentials(storage(), principal, params.companyId, params.deviceId), {
    'cache-control': 'no-store',
  }),
);
