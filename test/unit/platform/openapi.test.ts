import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { openApiDocument, openApiDocumentOf } from '../../../functions/contract/openapi.js';
import { defineRoute } from '../../../functions/contract/route.js';
import { ROUTES } from '../../../functions/contract/routes.js';
import { ScenarioUploadForm, StoredScenario } from '../../../functions/contract/schemas/scenarios.js';
import { SearchResponse } from '../../../functions/contract/schemas/search.js';
import { FILTER_FIELDS } from '../../../functions/core/search/registry.js';
import { handler } from '../../../functions/handlers/openapi.js';

type Json = Record<string, unknown>;

const document = openApiDocument();
const PUBLIC_PATHS = new Set([
  '/token',
  '/revoke',
  '/.well-known/jwks.json',
  '/.well-known/oauth-authorization-server',
  '/.well-known/openid-configuration',
  '/openapi.json',
  '/docs',
  '/docs/redoc.standalone.js',
  '/console',
  '/console/assets/{asset}',
]);

function asObject(value: unknown): Json {
  expect(value, 'expected an object').toBeTypeOf('object');
  expect(value).not.toBeNull();
  return value as Json;
}

/** Resolves a local JSON pointer (`#/a/b`) inside the document; undefined when it does not exist. */
function resolvePointer(pointer: string): unknown {
  if (!pointer.startsWith('#/')) return undefined;
  let node: unknown = document;
  for (const raw of pointer.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (node === null || typeof node !== 'object' || !Object.hasOwn(node, key)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/** Follows `$ref` chains. */
function deref(value: unknown): Json {
  let node = asObject(value);
  for (let depth = 0; typeof node.$ref === 'string' && depth < 10; depth += 1) node = asObject(resolvePointer(node.$ref));
  return node;
}

/** Every `$ref` string anywhere in a value. */
function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) for (const element of value) collectRefs(element, out);
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') out.push(child);
      else collectRefs(child, out);
    }
  }
  return out;
}

function paths(): Json {
  return asObject(document.paths);
}

function operation(path: string, method: string): Json {
  return asObject(asObject(paths()[path])[method]);
}

function operationFor(id: string): Json {
  const route = ROUTES.find((candidate) => candidate.id === id);
  if (route === undefined) throw new Error(`no route ${id}`);
  return operation(route.path, route.method.toLowerCase());
}

function statuses(op: Json): string[] {
  return Object.keys(asObject(op.responses));
}

function parametersOf(op: Json): Json[] {
  return ((op.parameters ?? []) as unknown[]).map(deref);
}

describe('openApiDocument', () => {
  it('is an OpenAPI 3.1 document with the service info and JSON-serializable', () => {
    expect(document.openapi).toBe('3.1.0');
    const info = asObject(document.info);
    expect(info.version).toBe('0.1.0');
    expect(info.title).toBeTypeOf('string');
    expect(info.description).toMatch(/OR-ed/);
    expect(info.description).toMatch(/AND-ed/);
    expect(info.description).toMatch(/relevance/);
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
  });

  it('describes every route under its path and lowercase method, with the route id as operationId', () => {
    for (const route of ROUTES) {
      const op = operation(route.path, route.method.toLowerCase());
      expect(op.operationId, route.id).toBe(route.id);
    }
    const documented = Object.entries(paths()).flatMap(([path, item]) =>
      Object.keys(asObject(item))
        .filter((key) => key !== 'servers' && key !== 'parameters')
        .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(documented.sort()).toEqual(ROUTES.map((route) => `${route.method} ${route.path}`).sort());
  });

  it('resolves every $ref to an existing component', () => {
    const refs = collectRefs(document);
    expect(refs.length).toBeGreaterThan(50);
    for (const target of refs) {
      expect(target, target).toMatch(/^#\/components\/(schemas|responses|parameters|headers|requestBodies|securitySchemes)\/[^/]+$/);
      expect(resolvePointer(target), target).toBeDefined();
    }
  });

  it('gives upload and auth paths (or operations, on a path shared with the main API) their own servers, and the main API as the default', () => {
    const main = (document.servers as Json[]).map((server) => server.url);
    expect(main).toEqual(['http://127.0.0.1:3000']);
    for (const route of ROUTES) {
      const item = asObject(paths()[route.path]);
      const op = operation(route.path, route.method.toLowerCase());
      const effective = (op.servers ?? item.servers) as Json[] | undefined;
      const expected = { main: undefined, upload: 'http://127.0.0.1:3001', auth: 'http://127.0.0.1:3002' }[route.api];
      expect(effective?.[0]?.url, route.id).toBe(expected);
    }
    // GET (main) and POST (upload) share /companies/{companyId}/resources/scenarios: the servers sit on the POST only.
    const shared = asObject(paths()['/companies/{companyId}/resources/scenarios']);
    expect(shared.servers).toBeUndefined();
    expect(asObject(shared.get).servers).toBeUndefined();
    expect((asObject(shared.post).servers as Json[])[0]?.url).toBe('http://127.0.0.1:3001');
  });

  it('names the addresses given in MAIN_API_URL, UPLOAD_API_URL and AUTH_API_URL, without a trailing slash', () => {
    const saved = { main: process.env.MAIN_API_URL, upload: process.env.UPLOAD_API_URL, auth: process.env.AUTH_API_URL };
    try {
      process.env.MAIN_API_URL = 'https://main.execute-api.eu-west-1.amazonaws.com/';
      process.env.UPLOAD_API_URL = 'http://127.0.0.1:4001';
      process.env.AUTH_API_URL = 'https://auth.execute-api.eu-west-1.amazonaws.com/';
      const named = openApiDocument();
      expect((named.servers as Json[])[0]?.url).toBe('https://main.execute-api.eu-west-1.amazonaws.com');
      const item = asObject(asObject(named.paths)['/companies/{companyId}/resources/scenarios']);
      expect((asObject(item.post).servers as Json[])[0]?.url).toBe('http://127.0.0.1:4001');
      expect((asObject(asObject(named.paths)['/token']).servers as Json[])[0]?.url).toBe(
        'https://auth.execute-api.eu-west-1.amazonaws.com',
      );
      expect((openApiDocument({ main: 'https://api.example.com' }).servers as Json[])[0]?.url).toBe('https://api.example.com');
    } finally {
      for (const [name, value] of [
        ['MAIN_API_URL', saved.main],
        ['UPLOAD_API_URL', saved.upload],
        ['AUTH_API_URL', saved.auth],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  it('declares 431 on every operation, and a 405 response with Allow', () => {
    for (const route of ROUTES) expect(statuses(operation(route.path, route.method.toLowerCase())), route.id).toContain('431');
    const responses = asObject(asObject(document.components).responses);
    expect(asObject(asObject(responses.MethodNotAllowed).headers)).toHaveProperty('Allow');
  });

  it('requires the bearer token globally and waives it only on the public routes', () => {
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    const schemes = asObject(asObject(document.components).securitySchemes);
    expect(schemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });
    for (const route of ROUTES) {
      const op = operation(route.path, route.method.toLowerCase());
      if (PUBLIC_PATHS.has(route.path)) expect(op.security, route.id).toEqual([]);
      else expect(op.security, route.id).not.toEqual([]);
    }
  });

  it('declares a 2xx on every operation, and 401 and 403 on every authenticated one', () => {
    for (const route of ROUTES) {
      const codes = statuses(operation(route.path, route.method.toLowerCase()));
      expect(
        codes.some((code) => /^2\d\d$/.test(code)),
        route.id,
      ).toBe(true);
      expect(codes, route.id).toContain('500');
      if (!PUBLIC_PATHS.has(route.path)) {
        expect(codes, route.id).toEqual(expect.arrayContaining(['400', '401', '403', '503']));
      }
    }
  });

  it('declares 415 on every operation that reads a JSON body, and only there (a body in another charset is refused)', () => {
    for (const route of ROUTES) {
      const codes = statuses(operation(route.path, route.method.toLowerCase()));
      if (route.request?.body?.kind === 'json') expect(codes, route.id).toContain('415');
      else expect(codes, route.id).not.toContain('415');
    }
  });

  it('documents errorCount on every problem and at most 20 errors entries', () => {
    const schemas = asObject(asObject(document.components).schemas);
    expect(asObject(asObject(asObject(schemas.Problem).properties).errorCount)).toMatchObject({ type: 'integer', minimum: 21 });
    expect(JSON.stringify(schemas.BadRequestProblem)).toContain('"maxItems":20');
  });

  it('announces WWW-Authenticate on 401 and Retry-After on 503', () => {
    const responses = asObject(asObject(document.components).responses);
    expect(asObject(asObject(responses.Unauthorized).headers)).toHaveProperty('WWW-Authenticate');
    expect(asObject(asObject(responses.ServiceUnavailable).headers)).toHaveProperty('Retry-After');
  });

  it('declares the path parameters of every templated path', () => {
    for (const route of ROUTES) {
      const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = parametersOf(operation(route.path, route.method.toLowerCase()))
        .filter((parameter) => parameter.in === 'path')
        .map((parameter) => parameter.name);
      expect(declared.sort(), route.id).toEqual(names.sort());
    }
  });

  it('declares 201 (with Location), 404, 409, 413 and 422 on the upload, and publishes the multipart form with its payload part', () => {
    const upload = operationFor('ScenarioUpload');
    expect(statuses(upload)).toEqual(expect.arrayContaining(['201', '404', '409', '413', '422']));
    const created = deref(asObject(upload.responses)['201']);
    expect(asObject(created.headers)).toHaveProperty('Location');
    const stored = deref(asObject(asObject(created.content)['application/json']).schema);
    expect(stored.required).toEqual(['id', 'version', 'name', 'size', 'sha256', 'created']);

    const tooLarge = deref(asObject(upload.responses)['413']);
    const variants = (deref(asObject(asObject(tooLarge.content)['application/problem+json']).schema).anyOf as unknown[]).map(deref);
    expect(variants).toHaveLength(2);
    expect(JSON.stringify(variants)).toContain('quotaBytes');

    const invalid = deref(asObject(upload.responses)['422']);
    expect(deref(asObject(asObject(invalid.content)['application/problem+json']).schema).required).toContain('errors');

    const form = asObject(asObject(asObject(document.components).schemas).ScenarioUploadForm);
    expect(asObject(form.properties).payload).toMatchObject({ type: 'string', format: 'binary', contentMediaType: 'application/zip' });
  });

  it('declares 400 and 503 on the search', () => {
    expect(statuses(operationFor('Search'))).toEqual(expect.arrayContaining(['200', '400', '403', '503']));
  });

  it('turns each property of a params or query schema into a parameter (input side), repeatable when an array', () => {
    const route = defineRoute({
      id: 'Example',
      api: 'main',
      method: 'GET',
      path: '/companies/{companyId}/things/{thingId}',
      scope: 'search:read',
      entry: 'x.ts',
      request: {
        params: z.object({ companyId: z.string().describe('Company.') }),
        query: z
          .object({
            limit: z.string().regex(/^\d+$/).transform(Number).pipe(z.int().min(1).max(10)).default(5).describe('Page size.'),
            'connection.state': z
              .union([z.string(), z.array(z.string())])
              .transform((v) => [v].flat())
              .pipe(z.array(z.enum(['A', 'B'])))
              .optional(),
            tag: z.array(z.string()).optional(),
            q: z.string(),
          })
          .strict(),
      },
      responses: { 200: { description: 'OK', schema: z.object({ ok: z.boolean() }) } },
    });
    const made = openApiDocumentOf([route]);
    const op = asObject(asObject(asObject(made.paths)['/companies/{companyId}/things/{thingId}']).get);
    const byName = new Map(((op.parameters ?? []) as Json[]).map((parameter) => [parameter.name, parameter]));
    expect(byName.get('companyId')).toEqual({
      name: 'companyId',
      in: 'path',
      required: true,
      description: 'Company.',
      schema: { type: 'string' },
    });
    // A template parameter the params schema does not name is still declared, as a string.
    expect(byName.get('thingId')).toEqual({ name: 'thingId', in: 'path', required: true, schema: { type: 'string' } });
    // The input side: what the client sends (a string of digits), not the number the handler gets.
    expect(byName.get('limit')).toMatchObject({
      in: 'query',
      required: false,
      description: 'Page size.',
      schema: { type: 'string', pattern: '^\\d+$' },
    });
    expect(byName.get('tag')).toMatchObject({ in: 'query', required: false, style: 'form', explode: true, schema: { type: 'array' } });
    expect(byName.get('q')).toMatchObject({ in: 'query', required: true, schema: { type: 'string' } });
    expect(byName.has('connection.state')).toBe(true);
    expect(op.security).toEqual([{ bearerAuth: ['search:read'] }]);
  });

  it('documents the query parameters of the real routes from their schemas: paging, history filters, search filters', () => {
    const names = (id: string) =>
      parametersOf(operationFor(id))
        .filter((parameter) => parameter.in === 'query')
        .map((parameter) => parameter.name);
    expect(names('ScenarioList')).toEqual(['limit', 'cursor']);
    expect(names('DeploymentsHistory')).toEqual(['deviceId', 'scenarioId', 'version', 'from', 'to', 'limit', 'cursor']);
    expect(names('DeploymentsExecute')).toContain('dryRun');
    const search = new Map(parametersOf(operationFor('Search')).map((parameter) => [parameter.name, parameter]));
    for (const field of FILTER_FIELDS) {
      expect(search.get(field.field), field.field).toMatchObject({
        in: 'query',
        required: false,
        style: 'form',
        explode: true,
        schema: { type: 'array' },
      });
    }
    expect(search.get('pageSize')).toMatchObject({ in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } });
    expect(search.get('sort')?.schema).toMatchObject({ type: 'string', enum: expect.arrayContaining(['serial', 'updated']) });
    expect(asObject(asObject(search.get('connection.state')?.schema).items).enum).toEqual(['UNKNOWN', 'CONNECTED', 'DISCONNECTED']);
    const listing = new Map(parametersOf(operationFor('ScenarioList')).map((parameter) => [parameter.name, parameter]));
    expect(listing.get('limit')?.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 1000 });
    expect(parametersOf(operationFor('DeploymentsExecute')).find((parameter) => parameter.name === 'dryRun')?.schema).toMatchObject({
      type: 'boolean',
    });
    const connection = asObject(asObject(search.get('connection.state')?.schema).items);
    // Fixed enumerations are validated by the route; the document lists the values in the description of the filter.
    expect(connection.type).toBe('string');
    const filters = new Map(parametersOf(operationFor('SearchFilters')).map((parameter) => [parameter.name, parameter]));
    expect(filters.get('type')).toMatchObject({ in: 'query', required: false, schema: { type: 'string' } });
    expect(filters.has('page')).toBe(false);
  });

  it('follows a route definition with no other edit: a field added to a response schema appears in the document', () => {
    const withField = ROUTES.map((route) =>
      route.id !== 'Search'
        ? route
        : { ...route, responses: { ...route.responses, 200: { description: 'OK', schema: SearchResponse.extend({ took: z.number() }) } } },
    );
    const before = JSON.stringify(operationFor('Search'));
    const made = openApiDocumentOf(withField);
    const changed = asObject(asObject(asObject(made.paths)['/resources/search']).get);
    const schema = asObject(asObject(asObject(asObject(asObject(changed.responses)['200']).content)['application/json']).schema);
    expect(asObject(schema.properties).took).toEqual({ type: 'number' });
    expect(JSON.stringify(changed)).not.toBe(before);
  });

  it('refuses a route without responses', () => {
    const route = defineRoute({ id: 'Mute', api: 'main', method: 'GET', path: '/mute', scope: null, entry: 'x.ts' });
    expect(() => openApiDocumentOf([route])).toThrow(/Mute.*declares no responses/);
  });

  it('turns a request body into a requestBody of its media type, with the schema of its input side', () => {
    const route = defineRoute({
      id: 'Upload',
      api: 'upload',
      method: 'POST',
      path: '/things',
      scope: 'scenarios:write',
      entry: 'x.ts',
      request: { body: { kind: 'multipart', schema: ScenarioUploadForm, description: 'The form.' } },
      responses: { 201: { description: 'Created', schema: StoredScenario } },
    });
    const op = asObject(asObject(asObject(openApiDocumentOf([route]).paths)['/things']).post);
    expect(op.requestBody).toEqual({
      required: true,
      description: 'The form.',
      content: { 'multipart/form-data': { schema: { $ref: '#/components/schemas/ScenarioUploadForm' } } },
    });
  });

  it('declares 404 on the listing of one device only', () => {
    expect(statuses(operationFor('DeploymentsListDevice'))).toContain('404');
    expect(statuses(operationFor('DeploymentsListAll'))).not.toContain('404');
    const page = deref(
      asObject(asObject(deref(asObject(operationFor('DeploymentsListAll').responses)['200']).content)['application/json']).schema,
    );
    expect(asObject(page.properties)).toHaveProperty('nextCursor');
  });

  it('declares the page of history entries with who, when and note, and 400', () => {
    const history = operationFor('DeploymentsHistory');
    expect(statuses(history)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '500', '503']));
    const page = deref(asObject(asObject(deref(asObject(history.responses)['200']).content)['application/json']).schema);
    expect(asObject(page.properties)).toHaveProperty('nextCursor');
    const entry = deref(asObject(asObject(page.properties).items).items);
    const [action, status] = (entry.oneOf as unknown[]).map(deref);
    expect(action?.required).toEqual(
      expect.arrayContaining(['kind', 'id', 'target', 'what', 'action', 'state', 'cause', 'at', 'by', 'note']),
    );
    expect(action?.additionalProperties).toBe(false);
    expect(status?.required).toEqual(expect.arrayContaining(['kind', 'id', 'target', 'what', 'deploymentId', 'deviceStatus', 'at', 'by']));
    expect(status?.additionalProperties).toBe(false);
  });

  it('declares responses on every route, each JSON body a closed or referenced schema that resolves', () => {
    for (const route of ROUTES) {
      expect(Object.keys(route.responses ?? {}).length, route.id).toBeGreaterThan(0);
      for (const [status, response] of Object.entries(asObject(operation(route.path, route.method.toLowerCase()).responses))) {
        for (const media of Object.values(asObject(deref(response).content ?? {}))) {
          const schema = asObject(asObject(media).schema);
          if (typeof schema.$ref === 'string') expect(resolvePointer(schema.$ref), `${route.id} ${status} ${schema.$ref}`).toBeDefined();
        }
      }
    }
  });

  it('caps deployment target types at 64 characters and ids at 256, as the validator does', () => {
    const schemas = asObject(asObject(document.components).schemas);
    const target = asObject(asObject(schemas.DeploymentTarget).properties);
    expect(target.type).toMatchObject({ minLength: 1, maxLength: 64 });
    expect(target.id).toMatchObject({ minLength: 1, maxLength: 256 });
    const what = asObject(asObject(schemas.DeploymentWhat).properties);
    expect(what.subId).toMatchObject({ minLength: 1, maxLength: 256 });
  });

  it('describes batteries with a level and the deployment cause enumeration', () => {
    const schemas = asObject(asObject(document.components).schemas);
    const battery = asObject(asObject(asObject(schemas.Battery).properties).health);
    expect(asObject(battery.properties).level).toMatchObject({ type: 'number', minimum: 0, maximum: 100 });
    expect(asObject(schemas.DeploymentCause).enum).toContain('TARGET_NOT_FOUND');
  });
});

describe('GET /openapi.json handler', () => {
  it('answers 200 with the document and no bearer token', async () => {
    const event = {
      version: '2.0',
      routeKey: 'GET /openapi.json',
      rawPath: '/openapi.json',
      // A cache-buster is ignored, not refused.
      rawQueryString: 'v=2',
      headers: {},
      isBase64Encoded: false,
      requestContext: { http: { method: 'GET', path: '/openapi.json' } },
    } as unknown as APIGatewayProxyEventV2;
    const response = (await handler(event, {} as Context)) as APIGatewayProxyStructuredResultV2;
    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body ?? '')).toEqual(document);
  });
});
