import httpMultipartBodyParser from '@middy/http-multipart-body-parser';
import { BadRequestError, PayloadTooLargeError } from '../core/errors.js';
import { authorize } from '../core/principal.js';
import { uploadScenario } from '../core/scenarios/upload.js';
import { services } from '../platform/composition.js';
import { httpHandler, jsonResponse, pathParameter, singleQueryParameters } from '../platform/http.js';

/**
 * Largest archive accepted on the upload address, bytes (4 MiB). Lambda receives at most 6 MB per synchronous
 * invocation and API Gateway base64-encodes binary bodies (×4/3), which leaves about 4.4 MB for an archive and its
 * multipart framing. Larger archives go through a presigned upload slot.
 */
export const MAX_DIRECT_UPLOAD_BYTES = 4 * 1024 * 1024;

interface FilePart {
  filename?: string;
  content: Buffer;
  truncated?: boolean;
}

/**
 * POST {scenario_upload_url}/companies/{companyId}/resources/scenarios (spec endpoint 2): multipart part `payload`.
 * 201 stored (Location, body per docs/contract.md) / 409 version exists / 413 quota / 422 invalid archive.
 */
export const handler = httpHandler(
  async (event, { principal }) => {
    const companyId = pathParameter(event, 'companyId');
    authorize(principal, 'scenarios:write', companyId);
    singleQueryParameters(event, []);
    const parts = event.body as unknown as Record<string, unknown>;
    const payload = parts?.payload as FilePart | FilePart[] | string | undefined;
    if (payload === undefined || typeof payload === 'string' || Array.isArray(payload) || !Buffer.isBuffer(payload.content)) {
      throw new BadRequestError("The form must contain exactly one file part named 'payload' holding the ZIP archive.", [
        { path: 'payload', message: Array.isArray(payload) ? 'given more than once' : 'missing or not a file part' },
      ]);
    }
    if (payload.truncated === true) {
      throw new PayloadTooLargeError(
        `The archive exceeds the ${MAX_DIRECT_UPLOAD_BYTES}-byte limit of direct uploads; nothing was stored. Request a presigned upload slot (POST .../resources/scenarios/uploads) for larger archives.`,
      );
    }
    const { companies, scenarios, archives } = services();
    const stored = await uploadScenario({ companies, scenarios, archives }, principal, companyId, new Uint8Array(payload.content));
    return jsonResponse(201, stored, {
      location: `/companies/${encodeURIComponent(companyId)}/resources/scenarios/${encodeURIComponent(stored.id)}/versions/${encodeURIComponent(stored.version)}`,
    });
  },
  // The parser's types target REST API (v1) events; it reads only `headers`, `body` and `isBase64Encoded`, which v2 events share.
  httpMultipartBodyParser({ busboy: { limits: { files: 2, fileSize: MAX_DIRECT_UPLOAD_BYTES, fields: 10 } } }) as unknown as Parameters<typeof httpHandler>[1],
);
