import { consoleAsset as route } from '../contract/routes/console.js';
import { NotFoundError } from '../core/shared/errors.js';
import { acceptsGzip, CONSOLE_ASSET_MAX_AGE_SECONDS, consoleAsset } from '../platform/console.js';
import { routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/console/assets/{asset}: one of the console's content-hashed files, cached for good, gzip-compressed
 * for a client that accepts it.
 */
export const handler = routeHandler(route, async ({ params }, _context, event) => {
  const asset = await consoleAsset(params.asset, acceptsGzip(event.headers['accept-encoding']));
  if (asset === undefined)
    throw new NotFoundError(`No console file is named '${params.asset}'. Reload the console page to get the current ones.`);
  return {
    statusCode: 200,
    headers: {
      'content-type': asset.contentType,
      'cache-control': `public, max-age=${CONSOLE_ASSET_MAX_AGE_SECONDS}, immutable`,
      'x-content-type-options': 'nosniff',
      // Caches keep the compressed and the plain answer apart.
      vary: 'accept-encoding',
      ...(asset.contentEncoding === undefined ? {} : { 'content-encoding': asset.contentEncoding }),
    },
    ...(asset.contentEncoding === undefined
      ? { body: asset.body.toString('utf8') }
      : { body: asset.body.toString('base64'), isBase64Encoded: true }),
  };
});
