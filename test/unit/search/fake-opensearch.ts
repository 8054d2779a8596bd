/**
 * An in-memory stand-in for the part of OpenSearch the adapters use (index templates, indexes, aliases, `_aliases`,
 * `_bulk` with `require_alias`, `_refresh`, index deletion, a minimal `_search`), usable directly as an
 * OpenSearchTransport or over HTTP (so the official client, its retries and its signing are exercised too).
 * It answers with OpenSearch's statuses and error types for the cases the adapters handle; it is not a search engine.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { OpenSearchRequest, OpenSearchResponse, OpenSearchTransport } from '../../../functions/adapters/aws/opensearch-transport.js';

type Json = Record<string, unknown>;

/** One concrete index of the fake. */
export interface FakeIndex {
  /** `_id` → `_source`. */
  documents: Map<string, Json>;
  aliases: Set<string>;
  /** The `template` of the index template that matched at creation, if any (settings, mappings). */
  fromTemplate: Json | undefined;
  /** Created implicitly by a write to a missing name (what `require_alias` prevents). */
  autoCreated: boolean;
}

/** A request the fake received, with its alias table at that moment. */
export interface FakeRequestRecord {
  method: string;
  path: string;
  body: unknown;
  headers: IncomingHttpHeaders;
  /** alias → indexes, just before the request was handled. */
  aliasesBefore: Record<string, string[]>;
}

function error(statusCode: number, type: string, reason: string): OpenSearchResponse {
  return { statusCode, body: { error: { type, reason }, status: statusCode } };
}

/** See the module comment. */
export class FakeOpenSearch {
  readonly templates = new Map<string, Json>();
  readonly indexes = new Map<string, FakeIndex>();
  readonly requests: FakeRequestRecord[] = [];
  /** When true, the transport rejects as if the connection were refused (HTTP: the server answers nothing). */
  down = false;
  /** Answers queued here are given, in order, to the next requests instead of handling them (e.g. 403 refusals). */
  readonly refusals: OpenSearchResponse[] = [];
  /** `number_of_replicas` set on existing indexes through `PUT <names>/_settings`, by index. */
  readonly replicaSettings = new Map<string, unknown>();
  /** Answers a `_bulk` item for `_id` with this status and error type instead of writing it. */
  rejectItem: (id: string) => { status: number; type: string } | undefined = () => undefined;
  private server: Server | undefined;

  /** The fake as an OpenSearchTransport (no HTTP). */
  transport(): OpenSearchTransport {
    return {
      request: async (request: OpenSearchRequest) => {
        if (this.down) throw new Error('connect ECONNREFUSED 127.0.0.1:9200');
        return this.handle(request.method, request.path, request.body, {});
      },
    };
  }

  /** Serves the fake over HTTP on 127.0.0.1:`port` (0: any); returns the URL. */
  async listen(port = 0): Promise<string> {
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (this.down) {
          response.destroy();
          return;
        }
        const text = Buffer.concat(chunks).toString('utf8');
        const ndjson = (request.headers['content-type'] ?? '').includes('ndjson');
        const body = text === '' ? undefined : ndjson ? text : JSON.parse(text);
        const answer = this.handle(request.method ?? 'GET', request.url ?? '/', body, request.headers);
        response.writeHead(answer.statusCode, { 'content-type': 'application/json' });
        response.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', () => done()));
    this.server = server;
    return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  }

  /** Stops the HTTP server. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((done) => server.close(() => done()));
  }

  /** alias → its indexes (sorted). */
  aliasTable(): Record<string, string[]> {
    const table: Record<string, string[]> = {};
    for (const [name, index] of [...this.indexes].sort(([a], [b]) => (a < b ? -1 : 1))) {
      for (const alias of index.aliases) (table[alias] ??= []).push(name);
    }
    return table;
  }

  /** The documents behind `alias` (or in the index of that name). */
  documentsOf(target: string): Map<string, Json> {
    return this.resolve(target)?.documents ?? new Map();
  }

  /** Creates an index with an alias, as a setup would have (test arrangement). */
  seedIndex(name: string, alias: string, documents: Record<string, Json> = {}): void {
    this.indexes.set(name, {
      documents: new Map(Object.entries(documents)),
      aliases: new Set([alias]),
      fromTemplate: undefined,
      autoCreated: false,
    });
  }

  private resolve(target: string): FakeIndex | undefined {
    const direct = this.indexes.get(target);
    if (direct !== undefined) return direct;
    const behind = [...this.indexes.values()].filter((index) => index.aliases.has(target));
    return behind.length === 1 ? behind[0] : undefined;
  }

  private isAlias(name: string): boolean {
    return [...this.indexes.values()].some((index) => index.aliases.has(name));
  }

  /** Handles one request (path with query string). */
  handle(method: string, fullPath: string, body: unknown, headers: IncomingHttpHeaders): OpenSearchResponse {
    this.requests.push({ method, path: fullPath, body, headers, aliasesBefore: this.aliasTable() });
    const refusal = this.refusals.shift();
    if (refusal !== undefined) return refusal;
    const url = new URL(fullPath, 'http://fake');
    const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
    const [first = '', second] = segments;
    if (first === '_index_template' && method === 'PUT' && second !== undefined) {
      this.templates.set(second, body as Json);
      return { statusCode: 200, body: { acknowledged: true } };
    }
    if (first === '_alias' && method === 'GET' && second !== undefined) {
      const names = this.aliasTable()[second];
      if (names === undefined) return { statusCode: 404, body: { error: `alias [${second}] missing`, status: 404 } };
      return { statusCode: 200, body: Object.fromEntries(names.map((name) => [name, { aliases: { [second]: {} } }])) };
    }
    if (first === '_aliases' && method === 'POST') return this.aliases(body as { actions: Json[] });
    if (second === '_bulk' && method === 'POST')
      return this.bulk(first, String(body ?? ''), url.searchParams.get('require_alias') === 'true');
    if (second === '_refresh' && method === 'POST') {
      return this.resolve(first) === undefined
        ? error(404, 'index_not_found_exception', `no such index [${first}]`)
        : { statusCode: 200, body: {} };
    }
    if (second === '_settings' && method === 'PUT') {
      const names = first.split(',');
      if (names.some((name) => !this.indexes.has(name))) return error(404, 'index_not_found_exception', `no such index [${first}]`);
      for (const name of names) this.replicaSettings.set(name, (body as { index?: Json } | undefined)?.index?.number_of_replicas);
      return { statusCode: 200, body: { acknowledged: true } };
    }
    if (second === '_search' && method === 'POST') {
      const index = this.resolve(first);
      if (index === undefined) return error(404, 'index_not_found_exception', `no such index [${first}]`);
      const hits = [...index.documents].map(([_id, _source]) => ({ _id, _source }));
      return { statusCode: 200, body: { hits: { total: { value: hits.length }, hits: hits.slice(0, 20) }, aggregations: {} } };
    }
    if (second === undefined && method === 'PUT') return this.createIndex(first, (body ?? {}) as Json);
    if (second === undefined && method === 'DELETE') {
      const names = first.split(',');
      const existing = names.filter((name) => this.indexes.has(name));
      if (existing.length === 0 && url.searchParams.get('ignore_unavailable') !== 'true')
        return error(404, 'index_not_found_exception', `no such index [${first}]`);
      for (const name of existing) this.indexes.delete(name);
      return { statusCode: 200, body: { acknowledged: true } };
    }
    return error(400, 'fake_unsupported', `The fake does not support ${method} ${fullPath}`);
  }

  private createIndex(name: string, body: Json): OpenSearchResponse {
    if (this.indexes.has(name)) return error(400, 'resource_already_exists_exception', `index [${name}] already exists`);
    if (this.isAlias(name)) return error(400, 'invalid_index_name_exception', `Invalid index name [${name}], already exists as alias`);
    const aliases = Object.keys((body.aliases ?? {}) as Json);
    for (const alias of aliases) {
      if (this.indexes.has(alias))
        return error(
          400,
          'invalid_alias_name_exception',
          `Invalid alias name [${alias}]: an index or data stream exists with the same name as the alias`,
        );
    }
    const template = [...this.templates.values()]
      .filter((candidate) =>
        (candidate.index_patterns as string[]).some((pattern) => new RegExp(`^${pattern.replaceAll('*', '.*')}$`).test(name)),
      )
      .sort((a, b) => Number(b.priority ?? 0) - Number(a.priority ?? 0))[0];
    this.indexes.set(name, {
      documents: new Map(),
      aliases: new Set(aliases),
      fromTemplate: template?.template as Json | undefined,
      autoCreated: false,
    });
    return { statusCode: 200, body: { acknowledged: true, index: name } };
  }

  private aliases(body: { actions: Json[] }): OpenSearchResponse {
    for (const action of body.actions) {
      const [kind, spec] = Object.entries(action)[0] as [string, { index: string; alias: string }];
      const index = this.indexes.get(spec.index);
      if (index === undefined) return error(404, 'index_not_found_exception', `no such index [${spec.index}]`);
      if (kind === 'remove' && !index.aliases.has(spec.alias))
        return error(404, 'aliases_not_found_exception', `aliases [${spec.alias}] missing`);
    }
    for (const action of body.actions) {
      const [kind, spec] = Object.entries(action)[0] as [string, { index: string; alias: string }];
      const index = this.indexes.get(spec.index) as FakeIndex;
      if (kind === 'add') index.aliases.add(spec.alias);
      else index.aliases.delete(spec.alias);
    }
    return { statusCode: 200, body: { acknowledged: true } };
  }

  private bulk(target: string, body: string, requireAlias: boolean): OpenSearchResponse {
    const lines = body.split('\n').filter((line) => line !== '');
    let index = requireAlias ? (this.isAlias(target) ? this.resolve(target) : undefined) : this.resolve(target);
    if (index === undefined && !requireAlias) {
      index = { documents: new Map(), aliases: new Set(), fromTemplate: undefined, autoCreated: true };
      this.indexes.set(target, index);
    }
    const items: Json[] = [];
    for (let position = 0; position < lines.length; position += 1) {
      const action = JSON.parse(lines[position] as string) as Record<string, { _id: string }>;
      const [kind, meta] = Object.entries(action)[0] as [string, { _id: string }];
      const source = kind === 'index' ? (JSON.parse(lines[(position += 1)] as string) as Json) : undefined;
      if (index === undefined) {
        items.push({
          [kind]: {
            _id: meta._id,
            status: 404,
            error: {
              type: 'index_not_found_exception',
              reason: `no such index [${target}] and [require_alias] request flag is [true] and [${target}] is not an alias`,
            },
          },
        });
        continue;
      }
      const rejection = this.rejectItem(meta._id);
      if (rejection !== undefined) {
        items.push({
          [kind]: { _id: meta._id, status: rejection.status, error: { type: rejection.type, reason: 'rejected by the fake' } },
        });
        continue;
      }
      if (kind === 'index') {
        const created = !index.documents.has(meta._id);
        index.documents.set(meta._id, source as Json);
        items.push({ index: { _id: meta._id, status: created ? 201 : 200, result: created ? 'created' : 'updated' } });
      } else {
        const existed = index.documents.delete(meta._id);
        items.push({ delete: { _id: meta._id, status: existed ? 200 : 404, result: existed ? 'deleted' : 'not_found' } });
      }
    }
    const errors = items.some((item) => {
      const [kind, outcome] = Object.entries(item)[0] as [string, { status: number; error?: unknown }];
      return outcome.error !== undefined || (outcome.status >= 300 && !(kind === 'delete' && outcome.status === 404));
    });
    return { statusCode: 200, body: { took: 1, errors, items } };
  }
}
