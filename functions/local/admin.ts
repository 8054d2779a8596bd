/**
 * The local runtime's admin listener (loopback only) and its client: how `npm run reindex` asks a running
 * `npm start` to rebuild its search index. The runtime writes `{ pid, admin }` to `<data folder>/runtime.json`
 * while it runs; the client reads it and sends `POST {admin}/search/reindex`.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { problemTypeOf } from '../contract/problem-kinds.js';
import type { ReindexResult } from '../core/search/reindex.js';
import { DomainError } from '../core/shared/errors.js';
import { problemHeadersOf, problemTypeOfError, statusOf, titleOf } from '../platform/problem.js';
import type { WriteCounts } from './write-counter.js';

/** File of the data folder where a running runtime writes `{ pid, admin }` (removed on stop). */
export const RUNTIME_FILE = 'runtime.json';

/** Path of the admin listener's reindex route. */
export const REINDEX_PATH = '/search/reindex';
/** Path of the admin listener's write counts (benchmarks): `GET` answers WriteCounts. */
export const WRITES_PATH = '/stats/writes';

/**
 * An HTTP server (listen on 127.0.0.1 only) serving `POST /search/reindex`: runs `reindex` and answers 200
 * `{ index, documents, tookMs }`, or RFC 9457 problem+json: the DomainError's status (503 with Retry-After when
 * OpenSearch is unreachable), 500 for anything else; and `GET /stats/writes`: the runtime's WriteCounts since it
 * started (`writes`). Any other request is 404.
 * @param log one line per reindex, success or failure.
 */
export function createAdminServer(
  reindex: () => Promise<ReindexResult>,
  log: (message: string) => void,
  writes: () => WriteCounts = () => ({ dynamoDb: {}, searchDocuments: 0 }),
): Server {
  return createServer((request, response) => {
    const problem = (status: number, title: string, detail: string, type: string, headers: Record<string, string> = {}): void => {
      response.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
      response.end(JSON.stringify({ type, title, status, detail, instance: request.url }));
    };
    request.resume();
    if (request.method === 'GET' && request.url === WRITES_PATH) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify(writes()));
      return;
    }
    if (request.method !== 'POST' || request.url !== REINDEX_PATH) {
      problem(404, 'Not Found', `The admin listener serves POST ${REINDEX_PATH} and GET ${WRITES_PATH}.`, problemTypeOf('Not Found'));
      return;
    }
    reindex().then(
      (result) => {
        log(`Search index rebuilt: ${result.documents} documents in ${result.tookMs} ms (${result.index}).`);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(result));
      },
      (error: unknown) => {
        log(`Search reindex failed: ${(error as Error).message}`);
        if (error instanceof DomainError)
          problem(statusOf(error), titleOf(error), error.message, problemTypeOfError(error), problemHeadersOf(error));
        else
          problem(500, 'Internal Server Error', `The reindex failed: ${(error as Error).message}`, problemTypeOf('Internal Server Error'));
      },
    );
  });
}

/**
 * Asks the runtime running on `dataDirectory` to rebuild its search index; resolves with its answer.
 * @throws Error saying what to do when no runtime is found (no runtime.json), when it does not answer, or with
 *   the problem's `detail` when the reindex failed.
 */
export async function requestLocalReindex(dataDirectory: string): Promise<ReindexResult> {
  let admin: string;
  try {
    admin = (JSON.parse(await readFile(join(dataDirectory, RUNTIME_FILE), 'utf8')) as { admin: string }).admin;
  } catch {
    throw new Error(
      `No local runtime found in ${dataDirectory} (no ${RUNTIME_FILE}): start it with npm start (same DATA_DIR), ` +
        'or set SEARCH_ENGINE=opensearch and OPENSEARCH_URL to reindex an OpenSearch.',
    );
  }
  const response = await fetch(`${admin}${REINDEX_PATH}`, { method: 'POST' }).catch((error: unknown) => {
    throw new Error(`The local runtime at ${admin} does not answer (${(error as Error).message}); is npm start still running?`);
  });
  const body = (await response.json()) as ReindexResult & { detail?: string };
  if (response.status !== 200) throw new Error(`The local runtime answered ${response.status}: ${body.detail ?? JSON.stringify(body)}`);
  return body;
}
