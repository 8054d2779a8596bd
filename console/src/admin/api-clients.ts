/**
 * The calls of the API clients page, each answering its data or the message to show (device/load.ts's Loaded): a
 * page of clients (of one company, or of every company for a platform administrator), one client, create one (its
 * secret answered once), change its name, role or whether it is enabled, delete it, rotate its secret (the new one
 * answered once). The roles offered are in client-roles.ts.
 */
import { attempt, type Loaded } from '../device/load.js';
import { api, problemText } from '../session.js';
import type { ApiClientRole } from './client-roles.js';
import { refusalText } from './refusal.js';

/** A page of clients as the typed client answers it. */
const clientsPage = (company: string, limit: number | undefined, cursor: string | undefined) =>
  api.main.GET('/admin/api-clients', {
    params: {
      query: {
        ...(company === '' ? {} : { company }),
        ...(limit === undefined ? {} : { limit }),
        ...(cursor === undefined ? {} : { cursor }),
      },
    },
  });

/** A client's create answer as the typed client gives it. */
const createCall = (body: ApiClientCreate) => api.main.POST('/admin/api-clients', { body });

/** An API client as the administration API gives it (never its secret). */
export type ApiClient = NonNullable<Awaited<ReturnType<typeof clientsPage>>['data']>['items'][number];
/** A client with its new secret: the answer of a create or a rotation, the only ones that show it. */
export type ApiClientWithSecret = NonNullable<Awaited<ReturnType<typeof createCall>>['data']>;
/** What a new client is made of. */
export interface ApiClientCreate {
  name: string;
  company: string;
  role: ApiClientRole;
}

/** A page of clients of `company` (every company when empty), `limit` a page, from `cursor`. */
export function loadApiClients(
  company: string,
  limit: number | undefined,
  cursor?: string,
): Promise<Loaded<{ items: ApiClient[]; nextCursor: string | null }>> {
  return attempt(() => clientsPage(company, limit, cursor));
}

/** One client; a 404 (unknown, or another company's for a company administrator) has `status` 404. */
export function loadApiClient(clientId: string): Promise<Loaded<ApiClient>> {
  return attempt(() => api.main.GET('/admin/api-clients/{clientId}', { params: { path: { clientId } } }));
}

/** Runs a change and answers its data, or the refusal with each field the service names (`name: …`). */
async function change<T>(call: () => Promise<{ data?: T; error?: unknown; response: Response }>): Promise<Loaded<T>> {
  try {
    const { data, error, response } = await call();
    if (data !== undefined) return { ok: true, data };
    return { ok: false, message: refusalText(error, response.status), status: response.status };
  } catch {
    return { ok: false, message: problemText(undefined) };
  }
}

/** Creates a client: it with its secret, shown once. */
export function createApiClient(body: ApiClientCreate): Promise<Loaded<ApiClientWithSecret>> {
  return change(() => createCall(body));
}

/** Changes a client's name, role or whether it is enabled: the client as changed. */
export function updateApiClient(
  clientId: string,
  body: { name?: string; role?: ApiClientRole; enabled?: boolean },
): Promise<Loaded<ApiClient>> {
  return change(() => api.main.PATCH('/admin/api-clients/{clientId}', { params: { path: { clientId } }, body }));
}

/** Deletes a client: it gets no token from then on, and its live tokens stop. */
export function deleteApiClient(clientId: string): Promise<Loaded<null>> {
  return change(async () => {
    const answer = await api.main.DELETE('/admin/api-clients/{clientId}', { params: { path: { clientId } } });
    return { ...answer, data: answer.response.ok ? null : undefined };
  });
}

/** Rotates a client's secret: the client with its new secret (the previous one works until previousSecretExpiresAt). */
export function rotateApiClientSecret(clientId: string): Promise<Loaded<ApiClientWithSecret>> {
  return change(() => api.main.POST('/admin/api-clients/{clientId}/secret', { params: { path: { clientId } } }));
}
