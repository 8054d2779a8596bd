import { scenarioSkeleton } from '../contract/routes/scenarios.js';
import { DEFAULT_SKELETON_VERSION } from '../core/scenarios/model.js';
import { buildSkeletonArchive } from '../core/scenarios/skeleton.js';
import { routeHandler } from '../platform/http.js';

/** GET {base_url}/companies/{companyId}/resources/scenarios/skeleton.zip?version=: a skeleton ZIP. */
export const handler = routeHandler(scenarioSkeleton, async ({ query }) => {
  const { archive, manifest } = await buildSkeletonArchive(query.version ?? DEFAULT_SKELETON_VERSION);
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
