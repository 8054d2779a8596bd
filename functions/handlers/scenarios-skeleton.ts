import { authorize } from '../core/principal.js';
import { buildSkeletonArchive, DEFAULT_SKELETON_VERSION } from '../core/scenarios/skeleton.js';
import { httpHandler, pathParameter, singleQueryParameters } from '../platform/http.js';

/** GET {base_url}/companies/{companyId}/resources/scenarios/skeleton.zip?version= (spec endpoint 1): a skeleton ZIP. */
export const handler = httpHandler(async (event, { principal }) => {
  const companyId = pathParameter(event, 'companyId');
  authorize(principal, 'scenarios:read', companyId);
  const version = singleQueryParameters(event, ['version']).get('version') ?? DEFAULT_SKELETON_VERSION;
  const { archive, manifest } = await buildSkeletonArchive(version);
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/zip',
      'content-disposition': `attachment; filename="${manifest.id}-${manifest.version}.zip"`,
    },
    body: Buffer.from(archive).toString('base64'),
    isBase64Encoded: true,
  };
});
