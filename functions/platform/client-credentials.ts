/**
 * How a client's credentials arrive at the token endpoint (RFC 6749 §2.3.1): in the form (`client_id`,
 * `client_secret`) or in an `Authorization: Basic` header. The grant itself (functions/core/devices/tokens.ts) takes
 * them already read.
 */
import type { ClientAuthenticationMethod } from '../core/devices/tokens.js';
import { OAuthError } from '../core/shared/errors.js';

/** A client's credentials as read from a token request, and how it sent them. */
export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
  method: ClientAuthenticationMethod;
}

/** Decodes one half of a Basic credential: `application/x-www-form-urlencoded` (RFC 6749 §2.3.1), `+` a space. */
function formDecoded(value: string): string {
  return decodeURIComponent(value.replaceAll('+', ' '));
}

/**
 * The client id and secret of a token request, from its `Authorization` header when that is HTTP Basic
 * (`Basic base64(urlencode(id) ":" urlencode(secret))`), else from its form; never both, since RFC 6749 §2.3.1 lets
 * a client use one method.
 * @param form the form's `client_id` and `client_secret`, if given.
 * @param authorization the `Authorization` header, if any.
 * @throws OAuthError invalid_request when the client authenticates both ways, when the Basic credential is not
 *   `base64(id:secret)` with each half form-urlencoded, or when the form's `client_id` names another client.
 */
export function clientCredentialsOf(
  form: { clientId?: string; clientSecret?: string },
  authorization: string | undefined,
): ClientCredentials {
  const basic = /^basic\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (basic === null) return { clientId: form.clientId, clientSecret: form.clientSecret, method: 'client_secret_post' };
  if (form.clientSecret !== undefined) {
    throw new OAuthError('invalid_request', 'Authenticate the client once: with HTTP Basic or with client_secret in the body, not both.');
  }
  const decoded = Buffer.from(basic[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  let clientId: string;
  let clientSecret: string;
  try {
    if (colon < 0) throw new URIError('no colon');
    clientId = formDecoded(decoded.slice(0, colon));
    clientSecret = formDecoded(decoded.slice(colon + 1));
  } catch {
    throw new OAuthError('invalid_request', 'The Basic credential must be base64 of "<client_id>:<client_secret>", each form-urlencoded.');
  }
  if (form.clientId !== undefined && form.clientId !== clientId) {
    throw new OAuthError('invalid_request', 'client_id in the body differs from the client of the Authorization header.');
  }
  return { clientId, clientSecret, method: 'client_secret_basic' };
}
