import { z } from 'zod';
import { BadRequestError, UnauthorizedError } from '../core/errors.js';
import { identityProvider } from '../platform/composition.js';
import { jsonBody, jsonResponse, publicHttpHandler } from '../platform/http.js';

const TokenRequestSchema = z.object({ username: z.string().min(1).max(256), password: z.string().min(1).max(1024) });

/**
 * POST {auth_url}/token with `{ username, password }` → `{ access_token, token_type: "Bearer", expires_in }`
 * (docs/contract.md); 401 problem+json on bad credentials, 400 on a malformed body.
 */
export const handler = publicHttpHandler(async (event) => {
  const parsed = TokenRequestSchema.safeParse(jsonBody(event));
  if (!parsed.success) {
    throw new BadRequestError('The body must be {"username": "...", "password": "..."}.', parsed.error.issues.map((issue) => ({
      path: `/${issue.path.join('/')}`, message: issue.message,
    })));
  }
  const token = await (await identityProvider()).issueToken(parsed.data.username, parsed.data.password);
  if (token === undefined) throw new UnauthorizedError('The username or password is wrong.', null);
  return jsonResponse(200, { access_token: token.accessToken, token_type: 'Bearer', expires_in: token.expiresInSeconds }, { 'cache-control': 'no-store' });
});
