import { consolePage as route } from '../contract/routes/console.js';
import { consolePage } from '../platform/console.js';
import { routeHandler } from '../platform/http.js';

/** GET {base_url}/console: the operator console's page, never cached, under its Content-Security-Policy. */
export const handler = routeHandler(route, async () => {
  const { html, contentSecurityPolicy } = await consolePage();
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': contentSecurityPolicy,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
    body: html,
  };
});
