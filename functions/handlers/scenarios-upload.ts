import { DIRECT_UPLOAD_LIMIT_TEXT, MAX_DIRECT_UPLOAD_BYTES } from '../contract/archives.js';
import { scenarioUpload } from '../contract/routes/uploads.js';
import { uploadScenario } from '../core/scenarios/upload.js';
import { BadRequestError, PayloadTooLargeError } from '../core/shared/errors.js';
import { archiveStorage } from '../platform/composition/archives.js';
import { storage } from '../platform/composition/storage.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { type MultipartForm, multipartFormBody } from '../platform/multipart.js';

/**
 * POST {scenario_upload_url}/companies/{companyId}/resources/scenarios: multipart part `payload`.
 * 201 stored (Location, body per docs/contract.md) / 409 version exists / 413 quota / 422 invalid archive. The token, its
 * `scenarios:write` scope and the company are checked before the body is parsed (403 first, whatever the body).
 */
export const handler = routeHandler(
  scenarioUpload,
  async ({ params, body }, { principal }) => {
    const { companyId } = params;
    const payload = (body as unknown as MultipartForm).payload;
    if (payload === undefined || typeof payload === 'string' || Array.isArray(payload) || !Buffer.isBuffer(payload.content)) {
      throw new BadRequestError("The form must contain exactly one file part named 'payload' holding the ZIP archive.", [
        { path: 'payload', message: Array.isArray(payload) ? 'given more than once' : 'missing or not a file part' },
      ]);
    }
    if (payload.truncated === true) {
      throw new PayloadTooLargeError(
        `The archive is larger than ${DIRECT_UPLOAD_LIMIT_TEXT}, the limit of direct uploads; nothing was stored. Request a presigned upload slot (POST .../resources/scenarios/uploads) for larger archives.`,
      );
    }
    const { companies, scenarios } = storage();
    const { archives } = archiveStorage();
    const stored = await uploadScenario({ companies, scenarios, archives }, principal, companyId, new Uint8Array(payload.content));
    return jsonResponse(201, stored, {
      location: `/companies/${encodeURIComponent(companyId)}/resources/scenarios/${encodeURIComponent(stored.id)}/versions/${encodeURIComponent(stored.version)}`,
    });
  },
  multipartFormBody({ files: 2, fileBytes: MAX_DIRECT_UPLOAD_BYTES, fields: 10 }),
);
