import { scenarioUpload } from '../contract/routes/uploads.js';
import { BadRequestError, PayloadTooLargeError } from '../core/errors.js';
import { uploadScenario } from '../core/scenarios/upload.js';
import { services } from '../platform/composition.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { type MultipartForm, multipartFormBody } from '../platform/multipart.js';

/**
 * Largest archive accepted on the upload address, bytes (4 MiB). Lambda receives at most 6 MB per synchronous
 * invocation and API Gateway base64-encodes binary bodies (×4/3), which leaves about 4.4 MB for an archive and its
 * multipart framing. Larger archives go through a presigned upload slot.
 */
export const MAX_DIRECT_UPLOAD_BYTES = 4 * 1024 * 1024;

/** MAX_DIRECT_UPLOAD_BYTES as the 413 and the README state it: `4 MiB (4,194,304 bytes)`. */
export const DIRECT_UPLOAD_LIMIT_TEXT = `${MAX_DIRECT_UPLOAD_BYTES / 1024 ** 2} MiB (${MAX_DIRECT_UPLOAD_BYTES.toLocaleString('en-US')} bytes)`;

/**
 * POST {scenario_upload_url}/companies/{companyId}/resources/scenarios (spec endpoint 2): multipart part `payload`.
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
    const { companies, scenarios, archives } = services();
    const stored = await uploadScenario({ companies, scenarios, archives }, principal, companyId, new Uint8Array(payload.content));
    return jsonResponse(201, stored, {
      location: `/companies/${encodeURIComponent(companyId)}/resources/scenarios/${encodeURIComponent(stored.id)}/versions/${encodeURIComponent(stored.version)}`,
    });
  },
  multipartFormBody({ files: 2, fileBytes: MAX_DIRECT_UPLOAD_BYTES, fields: 10 }),
);
