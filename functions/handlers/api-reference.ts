import { apiReference } from '../contract/routes/service.js';
import { apiReferencePage } from '../platform/api-reference.js';
import { routeHandler } from '../platform/http.js';

/**
 * GET {base_url}/docs: the OpenAPI document rendered by Redoc, with a Content-Security-Policy that keeps the page on
 * this origin (no bearer token needed).
 */
export const handler = routeHandler(apiReference, async () => {
  const { html, contentSecurityPolicy } = apiReferencePage();
  return {
    statusCode: 200,
    headers: {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': contentSecurityPolicy,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    },
    body: html,
  };
});
