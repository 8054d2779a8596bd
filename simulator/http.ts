/** One HTTP exchange of the simulator, timed and counted in its request statistics. */
import type { RequestStats } from './stats.js';

/** What an exchange sends: a JSON or form body, and more headers. */
export interface ExchangeBody {
  json?: unknown;
  form?: URLSearchParams;
  headers?: Record<string, string>;
}

/** The status a network failure (no answer) is given: the answer's body is `{ detail }` with the failure's message. */
export const NO_ANSWER_STATUS = 599;

/**
 * Sends one request with `fetchImpl`, reads its whole body before the clock stops, and records the latency under
 * `name(status)` in `stats` (an error unless the status is in `expected`; `name(0)` for no answer).
 * @param token sent as `Authorization: Bearer`, when given
 * @returns the answer, its body buffered (readable again); a network failure answers NO_ANSWER_STATUS
 */
export async function timedExchange(
  stats: RequestStats,
  fetchImpl: typeof fetch,
  name: (status: number) => string,
  request: { url: string; method: string; token: string | undefined; body: ExchangeBody; expected: readonly number[] },
): Promise<Response> {
  const { url, method, token, body, expected } = request;
  const headers: Record<string, string> = { ...body.headers };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  let payload: string | undefined;
  if (body.json !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body.json);
  } else if (body.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    payload = body.form.toString();
  }
  const started = performance.now();
  let response: Response;
  try {
    response = await fetchImpl(url, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
  } catch (error) {
    stats.record(name(0), performance.now() - started, false);
    return new Response(JSON.stringify({ detail: (error as Error).message }), { status: NO_ANSWER_STATUS });
  }
  // The body is part of the exchange: read before the clock stops (the caller reads it again from a copy).
  const bytes = await response.arrayBuffer();
  // 204 and 304 are null-body statuses: a Response with a body (even an empty one) cannot carry them.
  const nullBody = response.status === 204 || response.status === 205 || response.status === 304;
  const buffered = new Response(nullBody ? null : bytes, { status: response.status, headers: response.headers });
  stats.record(name(response.status), performance.now() - started, expected.includes(response.status));
  return buffered;
}
