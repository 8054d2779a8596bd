/**
 * The OpenAPI 3.1 description of the whole service, served by GET {base_url}/openapi.json, generated from the route
 * definitions (ROUTES): each route is one operation (operationId = route id), its parameters and body come from its
 * `request` schemas, its security from its `scope`, its responses from its `responses`. Zod schemas become JSON Schema
 * draft 2020-12 (the dialect of OpenAPI 3.1) with `z.toJSONSchema`; a schema carrying an `id` in its metadata becomes
 * `#/components/schemas/<id>`.
 */
import * as z from 'zod';
import { DOWNLOAD_URL_LIFETIME_SECONDS } from '../core/scenarios/catalog.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../core/search/query.js';
import type { Scope } from '../core/shared/principal.js';
import { API_ADDRESS_ENV } from './environment.js';
import { MAX_PROBLEM_ERRORS } from './problem-kinds.js';
import { ACCEPTED_ALGORITHMS, IDEMPOTENCY_KEY_RETENTION_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from './protocol.js';
import type { RequestBody, ResponseHeader, RouteDefinition, RouteResponse } from './route.js';
import { type ApiName, ROUTES } from './routes.js';
import { Problem } from './schemas/problems.js';
import { HEADERS, PROBLEM_RESPONSES } from './schemas/responses.js';
import { ScenarioManifest, UploadSlotRequest } from './schemas/scenarios.js';

type Json = Record<string, unknown>;

/** Where each address listens when nothing else is known: the local runtime's default ports. */
const DEFAULT_ADDRESSES: Record<ApiName, string> = {
  main: 'http://127.0.0.1:3000',
  upload: 'http://127.0.0.1:3001',
  auth: 'http://127.0.0.1:3002',
};

const SERVER_DESCRIPTIONS: Record<ApiName, string> = {
  main: 'Main API ({base_url}); on AWS an API Gateway HTTP API.',
  upload:
    'Upload API ({scenario_upload_url}), used only for scenario uploads; on AWS its own API with its own payload limits and throttling.',
  auth: 'Authentication service ({auth_url}); on AWS a small API in front of an Amazon Cognito user pool.',
};

/**
 * The three addresses of docs/contract.md, "Addresses", as `servers` entries: `addresses` first, then the environment
 * (API_ADDRESS_ENV), then the local defaults. A trailing `/` (API Gateway stage URLs end with one) is dropped.
 */
function serversOf(baseUrls: Partial<Record<ApiName, string>>): Record<ApiName, Json> {
  const server = (api: ApiName): Json => {
    const url = baseUrls[api] ?? process.env[API_ADDRESS_ENV[api]] ?? DEFAULT_ADDRESSES[api];
    return { url: url.replace(/\/+$/, ''), description: SERVER_DESCRIPTIONS[api] };
  };
  return { main: server('main'), upload: server('upload'), auth: server('auth') };
}

const INFO_DESCRIPTION = `Device scenario deployment and resource search service: download a skeleton scenario archive, upload a
customized scenario package, deploy or undeploy scenario versions on devices, list active deployments, and search the
fleet (devices and scenarios) with filters, full-text search, sorting and pagination.

Contract choices where the specification is silent (docs/contract.md):

- **Addresses.** The main API (\`{base_url}\`), a separate upload address (\`{scenario_upload_url}\`) used only for
  uploads, and an authentication service (\`{auth_url}\`) that issues tokens at \`POST /token\` and publishes its keys at
  \`GET /.well-known/jwks.json\`.
- **Authentication.** Every endpoint except the token, JWKS, this document, its reference page (\`GET /docs\`) and
  the operator console's page and files (\`GET /console\`) takes \`Authorization: Bearer <JWT>\`. Tokens are checked for issuer, audience, expiry and \`nbf\`, signed with
  ${ACCEPTED_ALGORITHMS.join(', ')} only.
  Missing or invalid token: 401 with \`WWW-Authenticate: Bearer\`. The token's \`companies\` claim lists the companies the
  caller may act on and its \`scope\` claim the permissions (\`scenarios:read\`, \`scenarios:write\`, \`deployments:read\`,
  \`deployments:write\`, \`search:read\`, \`devices:read\`, \`devices:write\`, \`users:read\`, \`users:write\`,
  \`companies:read\`, \`companies:write\`, \`webhooks:read\`, \`webhooks:write\`, \`alerts:read\`, \`alerts:write\`), given to users through a role (\`viewer\`, \`operator\`, \`company-admin\`,
  \`platform-admin\`); a valid token without the company or the scope gets 403.
  When the issuer's key set cannot be fetched, authenticated routes answer 503.
- **Company scoping.** Another company's data is never visible, not even its existence: deploying to a device of
  another company reports \`TARGET_NOT_FOUND\`, and search and filter counts only cover the caller's companies.
- **Scenario packages.** \`scenario.json\` carries \`id\`, \`name\`, \`version\` (semantic version, the \`what.subId\` of
  deployments) and the thumbnails and assets it references under \`resources/\`; its JSON Schema is published at
  \`GET /companies/{companyId}/resources/scenarios/schema.json\`. Versions are immutable: re-uploading an existing
  (\`id\`, \`version\`) gives 409. A stored upload answers 201 with \`Location\`; an invalid archive 422 listing every
  violation; exceeding the company's storage quota 413 with \`quotaBytes\`, \`usedBytes\` and \`archiveBytes\`.
  Scenarios and their versions (size, sha256, uploader) are listed under \`/companies/{companyId}/resources/scenarios\`;
  each version's archive is downloaded through a presigned URL valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes, and
  \`.../scenarios/usage\` reports the same quota figures as a 413.
- **Deployments.** The response is 200 with one item per request entry, in request order, even when some items fail;
  a failed item has state \`FAILURE\` and a \`cause\`. A structurally invalid body gives 400 and changes nothing. Target
  types other than \`DEVICE\` and \`what\` types other than \`SCENARIO\` give \`NOT_IMPLEMENTED\`. Active deployments are
  listed with \`limit\`/\`cursor\` pagination (\`{ items, nextCursor }\`). Every attempted action, successful or not, is
  kept in the history (\`.../resources/deployments/history\`, newest first, same pagination), with who, when and the note.
- **Devices.** Operators register devices (\`PUT\` one, or \`POST\` up to 5,000 with one result per entry), read and
  delete them (a deleted device's deployments are undeployed, with cause \`DEVICE_DELETED\` in the history), and issue
  each a client id and secret. A device exchanges them at \`POST {auth_url}/token\` (OAuth 2.0 client credentials grant,
  form body or HTTP Basic) for a token of scope \`device\` that acts only as that device; refusals are OAuth errors
  (\`{ "error", "error_description" }\`).
- **Search.** One query parameter per filter field, repeated for several values: values of one field are OR-ed,
  different fields are AND-ed. \`global\` is a full-text query over the resources' text fields; when present every
  filter parameter is ignored, and without an explicit \`sort\` results come in relevance order (most relevant first).
  Pagination: \`page\` (1-based, default 1), \`pageSize\` (default ${DEFAULT_PAGE_SIZE}, max ${MAX_PAGE_SIZE}). Sorting:
  \`sort\` (default \`serial\`) and \`direction\` (\`ASC\` or \`DESC\`, default \`ASC\`); the response echoes the effective
  values. Without the \`company\` filter the search covers every company of the caller; a \`company\` outside the token
  gives 403. Unknown parameters and bad values give 400 naming the parameter and the allowed values.
- **Errors.** Every error is RFC 9457 \`application/problem+json\` with \`type\`, \`title\`, \`status\`, \`detail\`, and
  \`errors\` (a list of \`{ path, message }\`) where there are several; at most ${MAX_PROBLEM_ERRORS} are listed, and a longer
  list is cut, with \`errorCount\` giving the total. Locally, a path that exists with other methods only gives 405 with
  \`Allow\` (\`#/components/responses/MethodNotAllowed\`); a route sent to the wrong address gives 404 naming the address
  that serves it; headers above 16 KiB give 431.`;

/**
 * Request headers a route's middleware reads, which its `request` schemas do not cover (they describe path, query and
 * body only): the Idempotency-Key of the deployment request, read by the idempotency middleware; the If-None-Match of
 * the device's desired state, read by its handler.
 */
const HEADER_PARAMETERS: Readonly<Record<string, readonly Json[]>> = {
  DeploymentsExecute: [
    {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: `A string of 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters chosen by the client for this request; a retry with the same key and the same body returns the first response without executing again (${IDEMPOTENCY_KEY_RETENTION_SECONDS / 3600} h, per company). An empty or longer key gives 400.`,
      schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH },
    },
  ],
  DeviceDeploymentsGet: [
    {
      name: 'If-None-Match',
      in: 'header',
      required: false,
      description:
        'The `ETag` of the desired state the device last received (or a list of tags, or `*`): while it is still current the answer is 304 with no body.',
      schema: { type: 'string' },
    },
  ],
};

const SCHEMA_PREFIX = '#/components/schemas/';

/** The largest integer zod gives `z.int()` as bounds: bounds that say nothing, dropped from the document. */
const SAFE_INTEGER_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * Tidies zod's JSON Schema for readers: drops the safe-integer bounds of `z.int()` and the regular expression zod
 * adds to `format: date-time` (the format says the same, and validators check it).
 */
function tidy({ jsonSchema }: { jsonSchema: Json }): void {
  if (SAFE_INTEGER_BOUNDS.has(jsonSchema.minimum as number)) delete jsonSchema.minimum;
  if (SAFE_INTEGER_BOUNDS.has(jsonSchema.maximum as number)) delete jsonSchema.maximum;
  if (jsonSchema.format === 'date-time') delete jsonSchema.pattern;
}

/** Rewrites zod's local `#/$defs/<id>` references into component references, in place. */
function toComponentRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toComponentRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof child === 'string' ? child.replace(/^#\/\$defs\//, SCHEMA_PREFIX) : toComponentRefs(child);
  }
  return out;
}

/** Turns zod schemas into JSON Schema, collecting the schemas that carry an `id` as components. */
class SchemaCollector {
  readonly components: Record<string, Json> = {};

  /**
   * The JSON Schema of `schema` as seen on its `io` side (request: input, response: output); a schema with an `id`
   * becomes a `$ref` to its component.
   * @throws Error when one id stands for two different JSON Schemas (two zod schemas sharing an id, or one schema
   *   whose input and output sides differ and that is used on both sides).
   */
  render(schema: z.ZodType, io: 'input' | 'output'): Json {
    const {
      $schema: _dialect,
      $defs,
      ...root
    } = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      unrepresentable: 'any',
      override: tidy as never,
    }) as Json;
    for (const [id, definition] of Object.entries(($defs ?? {}) as Record<string, Json>)) this.add(id, toComponentRefs(definition) as Json);
    return toComponentRefs(root) as Json;
  }

  private add(id: string, definition: Json): void {
    const existing = this.components[id];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(definition)) {
      throw new Error(`Schema id '${id}' stands for two different JSON Schemas; give each its own id.`);
    }
    this.components[id] = definition;
  }
}

/** The names of the shared objects (schemas/responses.ts), for `$ref`s to their components. */
const RESPONSE_NAMES = new Map<RouteResponse, string>(Object.entries(PROBLEM_RESPONSES).map(([name, response]) => [response, name]));
const HEADER_NAMES = new Map<ResponseHeader, string>(Object.entries(HEADERS).map(([name, header]) => [header, name]));

/** Builds the document's operations and the components they use. */
class DocumentBuilder {
  readonly schemas = new SchemaCollector();
  readonly responses: Record<string, Json> = {};
  readonly headers: Record<string, Json> = {};

  header(header: ResponseHeader): Json {
    const name = HEADER_NAMES.get(header);
    const inline = {
      description: header.description,
      required: header.required ?? false,
      schema: this.schemas.render(header.schema, 'output'),
    };
    if (name === undefined) return inline;
    this.headers[name] = inline;
    return { $ref: `#/components/headers/${name}` };
  }

  response(status: number, response: RouteResponse): Json {
    const name = RESPONSE_NAMES.get(response);
    const contentType = response.contentType ?? (status >= 400 ? 'application/problem+json' : 'application/json');
    const headers = Object.entries(response.headers ?? {});
    const inline: Json = {
      description: response.description,
      ...(headers.length === 0 ? {} : { headers: Object.fromEntries(headers.map(([header, value]) => [header, this.header(value)])) }),
      ...(response.schema === undefined
        ? {}
        : {
            content: {
              [contentType]: { schema: this.schemas.render(response.schema, 'output') },
              ...Object.fromEntries(
                Object.entries(response.alternatives ?? {}).map(([type, schema]) => [
                  type,
                  { schema: this.schemas.render(schema, 'output') },
                ]),
              ),
            },
          }),
    };
    if (name === undefined) return inline;
    this.responses[name] = inline;
    return { $ref: `#/components/responses/${name}` };
  }

  /**
   * One parameter per property of the route's params and query schemas (their input side). A path parameter of the
   * template without a schema (a route whose `request.params` is not written) is documented as a plain string.
   */
  parameters(route: RouteDefinition): Json[] {
    const declared = [
      ...this.objectParameters(route, 'path', route.request?.params),
      ...this.objectParameters(route, 'query', route.request?.query),
    ];
    const named = new Set(declared.filter((parameter) => parameter.in === 'path').map((parameter) => parameter.name));
    const undeclared = [...route.path.matchAll(/\{(\w+)\}/g)]
      .map((match) => match[1] as string)
      .filter((name) => !named.has(name))
      .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    return [...undeclared, ...declared, ...(HEADER_PARAMETERS[route.id] ?? [])];
  }

  private objectParameters(route: RouteDefinition, location: 'path' | 'query', schema: z.ZodType | undefined): Json[] {
    if (schema === undefined) return [];
    const rendered = this.schemas.render(schema, 'input');
    const object = typeof rendered.$ref === 'string' ? this.schemas.components[rendered.$ref.slice(SCHEMA_PREFIX.length)] : rendered;
    const properties = object?.properties as Record<string, Json> | undefined;
    if (properties === undefined) throw new Error(`Route ${route.id}: its ${location} schema must be a zod object.`);
    const required = new Set((object?.required ?? []) as string[]);
    return Object.entries(properties).map(([name, property]) => {
      const { description, ...propertySchema } = property;
      return {
        name,
        in: location,
        required: location === 'path' || required.has(name),
        ...(description === undefined ? {} : { description }),
        // A repeated query parameter arrives as an array of its values (`?a=1&a=2`).
        ...(propertySchema.type === 'array' ? { style: 'form', explode: true } : {}),
        schema: propertySchema,
      };
    });
  }

  requestBody(body: RequestBody): Json {
    const mediaType = { json: 'application/json', multipart: 'multipart/form-data' }[body.kind];
    const form = body.kind === 'json' ? body.form : undefined;
    return {
      required: !(body.kind === 'json' && body.optional === true),
      ...(body.description === undefined ? {} : { description: body.description }),
      content: {
        [mediaType]: { schema: this.schemas.render(body.schema, 'input') },
        ...(form === undefined ? {} : { 'application/x-www-form-urlencoded': { schema: this.schemas.render(form.schema, 'input') } }),
      },
    };
  }

  operation(route: RouteDefinition): Json {
    const parameters = this.parameters(route);
    const responses = Object.entries(route.responses ?? {}).sort(([left], [right]) => Number(left) - Number(right));
    if (responses.length === 0) throw new Error(`Route ${route.id} (${route.method} ${route.path}) declares no responses.`);
    return {
      operationId: route.id,
      ...(route.tags === undefined ? {} : { tags: [...route.tags] }),
      ...(route.summary === undefined ? {} : { summary: route.summary }),
      ...(route.description === undefined ? {} : { description: route.description }),
      ...(route.scope === null
        ? { security: [] }
        : { security: [{ bearerAuth: [route.scope] }], 'x-required-scope': route.scope satisfies Scope }),
      ...(parameters.length === 0 ? {} : { parameters }),
      ...(route.request?.body === undefined ? {} : { requestBody: this.requestBody(route.request.body) }),
      responses: Object.fromEntries(responses.map(([status, response]) => [status, this.response(Number(status), response)])),
    };
  }
}

/**
 * The OpenAPI 3.1 document of the whole service: one operation per route of ROUTES (its `id` is the `operationId`);
 * upload and auth paths (or operations, on a path shared with the main API) carry their own `servers`.
 * @param baseUrls base URL of an address (e.g. `https://abc.execute-api.eu-west-1.amazonaws.com`) when it is not in
 *   MAIN_API_URL, UPLOAD_API_URL or AUTH_API_URL; otherwise those, or else the local default ports 3000-3002.
 * @throws Error when a route declares no responses, a request schema is not an object, or one schema id stands for two
 *   different schemas (programming errors caught by the unit tests).
 */
export function openApiDocument(baseUrls: Partial<Record<ApiName, string>> = {}): Record<string, unknown> {
  return openApiDocumentOf(ROUTES, baseUrls);
}

/** openApiDocument for another list of routes (tests describe made-up routes with it). */
export function openApiDocumentOf(
  routes: readonly RouteDefinition[],
  baseUrls: Partial<Record<ApiName, string>> = {},
): Record<string, unknown> {
  const servers = serversOf(baseUrls);
  const builder = new DocumentBuilder();
  const paths = pathsOf(routes, servers, builder);
  // Published whether or not an operation refers to them: the local gateway's 405 (the answer of no operation), the
  // generic problem, the manifest inside every archive, and the body the upload slot route ignores.
  builder.response(405, PROBLEM_RESPONSES.MethodNotAllowed);
  for (const schema of [Problem, ScenarioManifest, UploadSlotRequest]) {
    builder.schemas.render(schema, 'input');
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: { title: 'Device scenario deployment and search service', version: '0.1.0', description: INFO_DESCRIPTION },
    servers: [servers.main],
    security: [{ bearerAuth: [] }],
    tags: DOCUMENT_TAGS,
    paths,
    components: {
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: `JWT from POST {auth_url}/token, signed with ${ACCEPTED_ALGORITHMS.join(', ')}. Claims: \`sub\`, \`companies\` (company ids the caller may act on), \`scope\` (space-separated permissions). Operations list the scope they need.`,
        },
      },
      schemas: sortKeys(builder.schemas.components),
      responses: sortKeys(builder.responses),
      headers: sortKeys(builder.headers),
    },
  };
}

/** The document's tags, in the order the reference page shows them. */
const DOCUMENT_TAGS: readonly Json[] = [
  { name: 'Scenarios', description: 'Scenario packages: skeleton, schema, upload, catalogue, storage usage.' },
  { name: 'Deployments', description: 'Deploying scenario versions to devices.' },
  { name: 'Rollouts', description: 'Deploying a scenario version to a fleet selected by a device search, wave by wave.' },
  { name: 'Search', description: 'Filters and search over devices and scenarios.' },
  {
    name: 'Devices',
    description: 'Devices: the registry and client credentials (operator tokens), and what a device pulls and reports (its own token).',
  },
  {
    name: 'Administration',
    description: "Companies and their storage quotas (a platform administrator's `companies:read` and `companies:write`).",
  },
  { name: 'Authentication', description: 'Token issuance and key set (authentication address).' },
  {
    name: 'Meta',
    description: 'This document, its rendered reference page for people (`GET /docs`), and the operator console (`GET /console`).',
  },
];

/**
 * The document's `paths`: each route's operation under its path and method. A path served by one address carries
 * that address's `servers`; a path served by several (GET on the main API, POST on the upload API) gives each
 * operation outside the main API its own `servers` instead.
 */
function pathsOf(
  routes: readonly RouteDefinition[],
  servers: ReturnType<typeof serversOf>,
  builder: DocumentBuilder,
): Record<string, Json> {
  const paths: Record<string, Json> = {};
  const addresses = new Map<string, Set<ApiName>>();
  for (const route of routes) addresses.set(route.path, (addresses.get(route.path) ?? new Set<ApiName>()).add(route.api));
  for (const route of routes) {
    const shared = (addresses.get(route.path)?.size ?? 1) > 1;
    const item = (paths[route.path] ??= route.api === 'main' || shared ? {} : { servers: [servers[route.api]] });
    const { operationId, ...operation } = builder.operation(route);
    item[route.method.toLowerCase()] = {
      operationId,
      ...(shared && route.api !== 'main' ? { servers: [servers[route.api]] } : {}),
      ...operation,
    };
  }
  return paths;
}

function sortKeys(record: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(Object.entries(record).sort(([left], [right]) => left.localeCompare(right)));
}
