/**
 * The per-process check of API client tokens (functions/core/clients/sessions.ts), imported by the handler stack only
 * when a request carries such a token, so that no other request loads it.
 */
import { ApiClientSessions } from '../../core/clients/sessions.js';
import { apiClientStore } from './api-clients.js';

let built: ApiClientSessions | undefined;

/** The process's ApiClientSessions on apiClientStore(), built once. @throws EnvironmentError as apiClientStore. */
export function apiClientSessions(): ApiClientSessions {
  built ??= new ApiClientSessions(apiClientStore());
  return built;
}
