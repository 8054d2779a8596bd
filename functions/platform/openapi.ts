/**
 * The OpenAPI 3.1 description of the whole service (spec endpoints, docs/contract.md choices), served by
 * GET {base_url}/openapi.json. Hand-written object literals; enumerations, limits and the filter parameters come from
 * the domain modules so the document cannot drift from what the handlers accept.
 */
import { ROUTES, type ApiName } from '../contract/routes.js';
import { MAX_HISTORY_ID_LENGTH } from '../core/deployment-history.js';
import { DEFAULT_LIST_LIMIT, DEPLOYMENT_CAUSES, MAX_DEPLOYMENT_ENTRIES, MAX_LIST_LIMIT } from '../core/deployments.js';
import {
  BATTERY_HEALTH_STATES, BATTERY_PLUGGED, BATTERY_STATUSES, CAPABILITY_MODES, CAPABILITY_TYPES, CONNECTION_STATES, HEALTH_MODES,
  MESSAGE_LEVELS, SUB_DEVICE_HEALTH_STATES,
} from '../core/devices.js';
import {
  UnprocessableRequestError, MAX_PROBLEM_ERRORS,
  BadRequestError, ConflictError, type DomainError, ForbiddenError, InvalidArchiveError, NotFoundError, PayloadTooLargeError,
  QuotaExceededError, ServiceUnavailableError, UnauthorizedError,
} from '../core/errors.js';
import type { Scope } from '../core/principal.js';
import { IDENTIFIER_PATTERN, scenarioManifestJsonSchema, SEMVER_PATTERN } from '../core/scenarios/manifest.js';
import { DOWNLOAD_URL_LIFETIME_SECONDS } from '../core/scenarios/catalog.js';
import { DEFAULT_SKELETON_VERSION } from '../core/scenarios/skeleton.js';
import { RESOURCE_TYPES } from '../core/search/documents.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_RESULT_WINDOW } from '../core/search/query.js';
import { FILTER_FIELDS, type FilterField, SORT_FIELDS } from '../core/search/registry.js';
import { ACCEPTED_ALGORITHMS } from './auth.js';

type Json = Record<string, unknown>;
type ComponentKind = 'schemas' | 'responses' | 'parameters' | 'headers' | 'requestBodies' | 'securitySchemes';

/** A `$ref` to a component of this document. */
function ref(kind: ComponentKind, name: string): Json {
  return { $ref: `#/components/${kind}/${name}` };
}

/** Name of the shared parameter component of one filter field. */
function filterParameterName(field: FilterField): string {
  return `filter.${field.field}`;
}

/** Where each address listens when nothing else is known: the local runtime's default ports. */
const DEFAULT_ADDRESSES: Record<ApiName, string> = { main: 'http://127.0.0.1:3000', upload: 'http://127.0.0.1:3001', auth: 'http://127.0.0.1:3002' };

const SERVER_DESCRIPTIONS: Record<ApiName, string> = {
  main: 'Main API ({base_url}); on AWS an API Gateway HTTP API.',
  upload: 'Upload API ({scenario_upload_url}), used only for scenario uploads; on AWS its own API with its own payload limits and throttling.',
  auth: 'Authentication service ({auth_url}); on AWS a small API in front of an Amazon Cognito user pool.',
};

/** Environment variables naming each address, set by the runtime (the local ports; the API URLs on AWS). */
export const ADDRESS_ENVIRONMENT: Record<ApiName, string> = { main: 'MAIN_API_URL', upload: 'UPLOAD_API_URL', auth: 'AUTH_API_URL' };

/**
 * The three addresses of docs/contract.md, "Addresses", as `servers` entries: `addresses` first, then the environment
 * (ADDRESS_ENVIRONMENT), then the local defaults. A trailing `/` (API Gateway stage URLs end with one) is dropped.
 */
function serversOf(baseUrls: Partial<Record<ApiName, string>>): Record<ApiName, Json> {
  const server = (api: ApiName): Json => {
    const url = baseUrls[api] ?? process.env[ADDRESS_ENVIRONMENT[api]] ?? DEFAULT_ADDRESSES[api];
    return { url: url.replace(/\/+$/, ''), description: SERVER_DESCRIPTIONS[api] };
  };
  return { main: server('main'), upload: server('upload'), auth: server('auth') };
}

const INTERNAL_ERROR_TYPE = 'https://device-scenario-service.dev/problems/internal-server-error';

const INFO_DESCRIPTION = `Device scenario deployment and resource search service: download a skeleton scenario archive, upload a
customized scenario package, deploy or undeploy scenario versions on devices, list active deployments, and search the
fleet (devices and scenarios) with filters, full-text search, sorting and pagination.

Contract choices where the specification is silent (docs/contract.md):

- **Addresses.** The main API (\`{base_url}\`), a separate upload address (\`{scenario_upload_url}\`) used only for
  uploads, and an authentication service (\`{auth_url}\`) that issues tokens at \`POST /token\` and publishes its keys at
  \`GET /.well-known/jwks.json\`.
- **Authentication.** Every endpoint except the token, JWKS and this document takes \`Authorization: Bearer <JWT>\`.
  Tokens are checked for issuer, audience, expiry and \`nbf\`, signed with ${ACCEPTED_ALGORITHMS.join(', ')} only.
  Missing or invalid token: 401 with \`WWW-Authenticate: Bearer\`. The token's \`companies\` claim lists the companies the
  caller may act on and its \`scope\` claim the permissions (\`scenarios:read\`, \`scenarios:write\`, \`deployments:read\`,
  \`deployments:write\`, \`search:read\`, \`devices:write\`); a valid token without the company or the scope gets 403.
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
  \`Allow\`; a route sent to the wrong address gives 404 naming the address that serves it; headers above 16 KiB give 431.`;

/* ----------------------------------------------------------------------------------------------------------------
 * Problem schemas and responses
 * -------------------------------------------------------------------------------------------------------------- */

/** A problem schema narrowed to one error kind: `type`, `title` and `status` fixed from the domain error class. */
function problemVariant(error: DomainError, description: string, extra: Json = {}, required: string[] = []): Json {
  return {
    description,
    allOf: [
      ref('schemas', 'Problem'),
      {
        type: 'object',
        properties: { type: { const: error.type }, title: { const: error.title }, status: { const: error.status }, ...extra },
        ...(required.length > 0 ? { required } : {}),
      },
    ],
  };
}

/** A problem answered by the local gateway itself, before any handler (no DomainError class). */
function gatewayProblem(status: number, title: string, description: string): Json {
  const type = `https://device-scenario-service.dev/problems/${title.toLowerCase().replaceAll(' ', '-')}`;
  return {
    description,
    allOf: [ref('schemas', 'Problem'), { type: 'object', properties: { type: { const: type }, title: { const: title }, status: { const: status } } }],
  };
}

const violations = { type: 'array', items: ref('schemas', 'ProblemViolation'), minItems: 1, maxItems: MAX_PROBLEM_ERRORS };

const problemSchemas: Json = {
  Problem: {
    type: 'object',
    description: 'RFC 9457 problem details. Extension members depend on the problem type.',
    properties: {
      type: { type: 'string', format: 'uri', description: 'Stable identifier of the problem kind.' },
      title: { type: 'string', description: 'Short summary of the problem kind.' },
      status: { type: 'integer', minimum: 400, maximum: 599, description: 'HTTP status code.' },
      detail: { type: 'string', description: 'Explanation specific to this occurrence.' },
      instance: { type: 'string', description: 'Request path of this occurrence.' },
      errorCount: {
        type: 'integer',
        minimum: MAX_PROBLEM_ERRORS + 1,
        description: `Present when \`errors\` was cut: the total number of violations, of which only the first ${MAX_PROBLEM_ERRORS} are listed (\`detail\` says how many were omitted).`,
      },
    },
    required: ['type', 'title', 'status', 'detail'],
  },
  ProblemViolation: {
    type: 'object',
    description: 'One violation: `path` locates it (JSON pointer into the body, archive path or query parameter name).',
    properties: { path: { type: 'string' }, message: { type: 'string' } },
    required: ['path', 'message'],
  },
  BadRequestProblem: problemVariant(
    new BadRequestError(''),
    'The request is malformed: unknown or repeated query parameter, bad value, invalid JSON or body structure. `errors` names each parameter or body path with the allowed values.',
    { errors: violations },
  ),
  UnauthorizedProblem: problemVariant(new UnauthorizedError('', null), 'Missing, malformed, expired or untrusted bearer token; or wrong credentials at the token endpoint.'),
  ForbiddenProblem: problemVariant(new ForbiddenError(''), 'The token is valid but lacks the required scope or the addressed company.'),
  NotFoundProblem: problemVariant(new NotFoundError(''), 'The addressed resource does not exist (or belongs to a company the caller cannot see).'),
  ConflictProblem: problemVariant(new ConflictError(''), 'The resource already exists and is immutable (a scenario version).'),
  UnprocessableRequestProblem: problemVariant(
    new UnprocessableRequestError(''),
    'The Idempotency-Key was already used with a different request body or query; use a new key for a new request.',
  ),
  QuotaExceededProblem: problemVariant(
    new QuotaExceededError('', { quotaBytes: 0, usedBytes: 0, archiveBytes: 0 }),
    "Storing the archive would exceed the company's storage quota.",
    {
      quotaBytes: { type: 'integer', minimum: 0, description: "The company's storage quota, bytes." },
      usedBytes: { type: 'integer', minimum: 0, description: 'Bytes already used by stored archives.' },
      archiveBytes: { type: 'integer', minimum: 0, description: 'Size of the refused archive, bytes.' },
    },
    ['quotaBytes', 'usedBytes', 'archiveBytes'],
  ),
  PayloadTooLargeProblem: problemVariant(
    new PayloadTooLargeError(''),
    "The request body is larger than the upload address accepts (API Gateway's payload limit); larger archives go through a presigned upload.",
  ),
  InvalidArchiveProblem: problemVariant(
    new InvalidArchiveError('', []),
    'The archive is not a readable ZIP, or scenario.json is missing or not compliant, or referenced resources are missing. `errors` lists every violation found, not only the first.',
    { errors: violations },
    ['errors'],
  ),
  InternalServerErrorProblem: {
    description: 'An unexpected error; it has been logged. No internals are disclosed.',
    allOf: [
      ref('schemas', 'Problem'),
      { type: 'object', properties: { type: { const: INTERNAL_ERROR_TYPE }, title: { const: 'Internal Server Error' }, status: { const: 500 } } },
    ],
  },
  ServiceUnavailableProblem: problemVariant(
    new ServiceUnavailableError(''),
    "A backend is unavailable: the search engine, or the token issuer's key set (JWKS) needed to verify the token.",
  ),
  MethodNotAllowedProblem: gatewayProblem(405, 'Method Not Allowed', 'The path exists on this address, with other methods only (listed in `Allow`).'),
  RequestHeaderFieldsTooLargeProblem: gatewayProblem(431, 'Request Header Fields Too Large', 'The request headers exceed 16 KiB (a very long token or many cookies).'),
};

function problemContent(schema: Json, example?: Json): Json {
  return { 'application/problem+json': { schema, ...(example === undefined ? {} : { example }) } };
}

const problemResponses: Json = {
  BadRequest: {
    description: 'Bad Request: malformed request; `errors` names each offending parameter or body path.',
    content: problemContent(ref('schemas', 'BadRequestProblem'), {
      type: new BadRequestError('').type,
      title: 'Bad Request',
      status: 400,
      detail: 'The search request has 1 invalid parameter(s): pageSize.',
      instance: '/resources/search',
      errors: [{ path: 'pageSize', message: `'pageSize' must be an integer from 1 to ${MAX_PAGE_SIZE}; got '500'.` }],
    }),
  },
  Unauthorized: {
    description: 'Unauthorized: the bearer token is missing, malformed, expired or untrusted.',
    headers: { 'WWW-Authenticate': ref('headers', 'WWW-Authenticate') },
    content: problemContent(ref('schemas', 'UnauthorizedProblem')),
  },
  Forbidden: {
    description: 'Forbidden: the token lacks the required scope or does not grant access to the company.',
    content: problemContent(ref('schemas', 'ForbiddenProblem')),
  },
  NotFound: {
    description: 'Not Found: the addressed resource does not exist for this company.',
    content: problemContent(ref('schemas', 'NotFoundProblem')),
  },
  Conflict: {
    description: 'Conflict: this scenario version already exists; versions are immutable and nothing was changed.',
    content: problemContent(ref('schemas', 'ConflictProblem')),
  },
  PayloadTooLarge: {
    description:
      "Content Too Large: either storing the archive would exceed the company's storage quota (`quotaBytes`, `usedBytes`, `archiveBytes`), or the request body exceeds the upload address's limit.",
    content: {
      'application/problem+json': {
        schema: { oneOf: [ref('schemas', 'QuotaExceededProblem'), ref('schemas', 'PayloadTooLargeProblem')] },
        examples: {
          quotaExceeded: {
            summary: 'Storage quota exceeded',
            value: {
              type: new QuotaExceededError('', { quotaBytes: 0, usedBytes: 0, archiveBytes: 0 }).type,
              title: 'Storage Quota Exceeded',
              status: 413,
              detail: "Storing this 2097152-byte archive would exceed company 'globex' storage quota: 4194304 of 5242880 bytes are used.",
              quotaBytes: 5242880,
              usedBytes: 4194304,
              archiveBytes: 2097152,
            },
          },
          payloadTooLarge: {
            summary: 'Request body too large',
            value: { type: new PayloadTooLargeError('').type, title: 'Payload Too Large', status: 413, detail: 'The request body exceeds 10485760 bytes.' },
          },
        },
      },
    },
  },
  UnprocessableArchive: {
    description:
      'Unprocessable Content: the archive is invalid or badly structured; `errors` lists every violation with its path: not a ZIP or truncated; scenario.json missing, not JSON or not valid against the schema (path `scenario.json#/<pointer>`); resources/ missing; a referenced file absent; entry names absolute, with `..`, backslashes or drive letters (central directory, Unicode Path field and local header must agree); symbolic links; encrypted entries; unsupported compression; duplicate names; more than 10,000 entries; more than 4 GiB declared uncompressed; an entry above 1 MiB with a compression ratio above 100:1; overlapping entries; CRC-32 or size mismatches. Nothing is stored and no quota is consumed.',
    content: problemContent(ref('schemas', 'InvalidArchiveProblem'), {
      type: new InvalidArchiveError('', []).type,
      title: 'Invalid Scenario Archive',
      status: 422,
      detail: 'The scenario archive has 2 problem(s); nothing was stored.',
      errors: [
        { path: 'scenario.json/version', message: 'must be a semantic version such as 1.0.0' },
        { path: 'resources/assets/index.html', message: 'referenced by scenario.json but missing from the archive' },
      ],
    }),
  },
  InternalServerError: {
    description: 'Internal Server Error: an unexpected error, logged on the server.',
    content: problemContent(ref('schemas', 'InternalServerErrorProblem')),
  },
  MethodNotAllowed: {
    description: 'Method Not Allowed (local runtime; API Gateway answers 404): the path exists on this address with other methods only; `Allow` lists them. A method and path served by another address get 404 instead, naming that address.',
    headers: { Allow: ref('headers', 'Allow') },
    content: problemContent(ref('schemas', 'MethodNotAllowedProblem')),
  },
  RequestHeaderFieldsTooLarge: {
    description: 'Request Header Fields Too Large (local runtime): the request headers exceed 16 KiB; nothing was processed.',
    content: problemContent(ref('schemas', 'RequestHeaderFieldsTooLargeProblem')),
  },
  ServiceUnavailable: {
    description:
      "Service Unavailable: a backend (the database, the archive storage, the search backend, or the token issuer's JWKS needed to verify the token) cannot be reached, is failing or is throttling requests. Retry after `Retry-After` seconds.",
    headers: { 'Retry-After': ref('headers', 'Retry-After') },
    content: problemContent(ref('schemas', 'ServiceUnavailableProblem')),
  },
};

/* ----------------------------------------------------------------------------------------------------------------
 * Domain schemas
 * -------------------------------------------------------------------------------------------------------------- */

const dateTime = (description: string): Json => ({ type: 'string', format: 'date-time', description });
const text = (description: string): Json => ({ type: 'string', description });
const enumeration = (values: readonly string[], description: string): Json => ({ type: 'string', enum: [...values], description });

const deviceSchemas: Json = {
  Battery: {
    type: 'object',
    description:
      'Battery of a hub or sub-device. The specification lists the battery level a second time under the name `health.status`; this API exposes it as `health.level`.',
    properties: {
      health: {
        type: 'object',
        properties: {
          state: enumeration(BATTERY_HEALTH_STATES, 'Battery health.'),
          plugged: enumeration(BATTERY_PLUGGED, 'Power source plugged in.'),
          status: enumeration(BATTERY_STATUSES, 'Charging status.'),
          level: { type: 'number', minimum: 0, maximum: 100, description: 'Battery level in percent, 0 to 100.' },
          cycle: { type: 'integer', minimum: 0, description: 'Charge cycle count.' },
        },
        required: ['state', 'plugged', 'status', 'level', 'cycle'],
      },
    },
    required: ['health'],
  },
  HealthMessage: {
    type: 'object',
    properties: { key: text('Message key.'), message: text('Message text.'), level: enumeration(MESSAGE_LEVELS, 'Message level.') },
    required: ['key', 'message', 'level'],
  },
  DeviceCommand: {
    type: 'object',
    description: 'A command the sub-device accepts.',
    properties: {
      command: text('Command name.'),
      title: text('Command title.'),
      description: text('Command description.'),
      payload: { description: 'Command payload (any JSON).' },
      arguments: { description: 'Command arguments; their structure is not specified (any JSON).' },
    },
    required: ['command', 'title', 'description', 'payload', 'arguments'],
  },
  SubDevice: {
    type: 'object',
    description: 'A peripheral connected to a hub (printer, payment terminal, screen, ...).',
    properties: {
      uid: text('Sub-device id.'),
      label: text('Sub-device label.'),
      version: text('Sub-device version.'),
      health: {
        type: 'object',
        properties: {
          state: enumeration(
            SUB_DEVICE_HEALTH_STATES,
            'BOOTING; NOMINAL; WARNING (usable with a minor problem); DOWN (unusable, major problem); HIBERNATION (unusable, maintenance).',
          ),
          message: text('General health message.'),
          messages: { type: 'array', items: ref('schemas', 'HealthMessage') },
        },
        required: ['state', 'message', 'messages'],
      },
      capability: {
        type: 'object',
        properties: {
          type: enumeration(CAPABILITY_TYPES, 'Capability type.'),
          modes: { type: 'array', items: enumeration(CAPABILITY_MODES, 'Capability mode.') },
        },
        required: ['type', 'modes'],
      },
      battery: ref('schemas', 'Battery'),
      commands: { type: 'array', items: ref('schemas', 'DeviceCommand') },
    },
    required: ['uid', 'label', 'version', 'health', 'capability', 'commands'],
  },
  Hub: {
    type: 'object',
    description: 'A hub inside a device, with its sub-devices.',
    properties: {
      uid: text('Hub unique id.'),
      label: text('Hub label.'),
      version: text('Hub version.'),
      registeredSince: dateTime('Hub registration time.'),
      type: text('Hub type; values are reserved for future use.'),
      battery: ref('schemas', 'Battery'),
      devices: { type: 'array', description: 'Sub-devices connected to the hub.', items: ref('schemas', 'SubDevice') },
    },
    required: ['uid', 'label', 'version', 'registeredSince', 'type', 'devices'],
  },
  Device: {
    type: 'object',
    description: 'The device resource (spec "Device resource").',
    properties: {
      id: { type: 'string', pattern: IDENTIFIER_PATTERN.source, description: 'Device identifier, used as `target.id` in deployments.' },
      company: text('Owning company id.'),
      serial: text('Serial number.'),
      created: dateTime('Creation time.'),
      updated: dateTime('Last update time.'),
      location: {
        type: 'object',
        properties: { name: text('Short location text.'), description: text('Long location text.') },
      },
      geoLocation: {
        type: 'object',
        properties: {
          latitude: { type: 'number', format: 'double' },
          longitude: { type: 'number', format: 'double' },
          altitude: { type: 'number', format: 'double' },
        },
      },
      connection: {
        type: 'object',
        properties: {
          state: enumeration(CONNECTION_STATES, 'UNKNOWN (never seen connected), CONNECTED or DISCONNECTED.'),
          connectedSince: dateTime('Present when CONNECTED: since when.'),
          disconnectedSince: dateTime('Present when DISCONNECTED: since when.'),
        },
        required: ['state'],
      },
      health: {
        type: 'object',
        description: 'Device health state.',
        properties: {
          updated: dateTime('Health update time.'),
          versionCode: text('Version code.'),
          versionName: text('Version name.'),
          connectedTo: text('Reserved for future use.'),
          mode: enumeration(
            HEALTH_MODES,
            'SERVER (virtual device in the cloud), EMBEDDED_PLATFORM_COMPUTER, EMBEDDED_PLATFORM_ANDROID or EMBEDDED_PLATFORM_UNKNOWN.',
          ),
          hubs: { type: 'array', items: ref('schemas', 'Hub') },
        },
        required: ['updated', 'versionCode', 'versionName', 'mode', 'hubs'],
      },
    },
    required: ['id', 'company', 'serial', 'created', 'updated', 'connection'],
  },
  DeviceSearchResource: {
    description: 'A device in search results: the device resource plus `type`.',
    allOf: [ref('schemas', 'Device'), { type: 'object', properties: { type: { const: 'DEVICE' } }, required: ['type'] }],
  },
  ScenarioSearchResource: {
    type: 'object',
    description: 'A scenario in search results.',
    properties: {
      type: { const: 'SCENARIO' },
      id: text('Scenario identifier (`what.id`).'),
      company: text('Owning company id.'),
      name: text('Display name.'),
      description: text('What the scenario does.'),
      latestVersion: text('Highest semantic version stored.'),
      versions: { type: 'array', items: { type: 'string' }, description: 'Stored versions, oldest first.' },
      created: dateTime('Creation time.'),
      updated: dateTime('Last update time.'),
    },
    required: ['type', 'id', 'company', 'name', 'latestVersion', 'versions', 'created', 'updated'],
  },
  SearchResource: {
    description: 'One search result; `type` tells its shape.',
    oneOf: [ref('schemas', 'DeviceSearchResource'), ref('schemas', 'ScenarioSearchResource')],
    discriminator: {
      propertyName: 'type',
      mapping: { DEVICE: '#/components/schemas/DeviceSearchResource', SCENARIO: '#/components/schemas/ScenarioSearchResource' },
    },
  },
};

const searchSchemas: Json = {
  SearchResponse: {
    type: 'object',
    properties: {
      total: { type: 'integer', minimum: 0, description: 'Number of resources matching the criteria.' },
      page: {
        type: 'object',
        properties: {
          page: { type: 'integer', minimum: 1, description: 'Current page (the first page is 1).' },
          pages: { type: 'integer', minimum: 0, description: 'Total number of pages.' },
          pageSize: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, description: 'Resources per page.' },
        },
        required: ['page', 'pages', 'pageSize'],
      },
      sort: {
        type: 'object',
        description: 'The effective sort. `relevance` is reported for `global` searches without an explicit `sort`.',
        properties: {
          field: { type: 'string', enum: [...SORT_FIELDS, 'relevance'] },
          direction: { type: 'string', enum: ['ASC', 'DESC'] },
        },
        required: ['field', 'direction'],
      },
      resources: { type: 'array', items: ref('schemas', 'SearchResource') },
    },
    required: ['total', 'page', 'sort', 'resources'],
  },
  FilterDescriptor: {
    type: 'object',
    properties: {
      field: { type: 'string', enum: FILTER_FIELDS.map((field) => field.field), description: 'Filterable field; also the query parameter name.' },
      scope: { type: ['string', 'null'], enum: [...RESOURCE_TYPES, null], description: 'Resource type the field applies to; null when not tied to one type.' },
      definition: {
        type: 'object',
        properties: {
          type: { const: 'ENUMERATION', description: 'Filter kind; ENUMERATION is the only kind.' },
          parameters: {
            type: 'array',
            description: 'Selectable values. Fixed enumerations list every value, with count 0 where nothing matches.',
            items: {
              type: 'object',
              properties: {
                name: text('Display name.'),
                value: text('Value to pass as the filter parameter.'),
                count: { type: 'integer', minimum: 0, description: "Resources currently matching this value, within the caller's companies." },
              },
              required: ['name', 'value', 'count'],
            },
          },
        },
        required: ['type', 'parameters'],
      },
    },
    required: ['field', 'scope', 'definition'],
  },
  FilterDescriptorList: {
    type: 'object',
    properties: { items: { type: 'array', items: ref('schemas', 'FilterDescriptor') } },
    required: ['items'],
  },
};

const deploymentSchemas: Json = {
  DeploymentTarget: {
    type: 'object',
    properties: {
      type: { type: 'string', minLength: 1, examples: ['DEVICE'], description: 'DEVICE; any other type is reported as NOT_IMPLEMENTED.' },
      id: { type: 'string', minLength: 1, description: 'Device identifier.' },
      subId: { type: ['string', 'null'], description: 'null for a device (a non-null subId is reported as NOT_IMPLEMENTED).' },
    },
    required: ['type', 'id'],
  },
  DeploymentWhat: {
    type: 'object',
    properties: {
      type: { type: 'string', minLength: 1, examples: ['SCENARIO'], description: 'SCENARIO; any other type is reported as NOT_IMPLEMENTED.' },
      id: { type: 'string', minLength: 1, description: 'Scenario identifier (`id` of scenario.json).' },
      subId: { type: 'string', minLength: 1, description: 'Scenario version (`version` of scenario.json).' },
    },
    required: ['type', 'id', 'subId'],
  },
  DeploymentAction: { type: 'string', enum: ['DEPLOY', 'UNDEPLOY'] },
  DeploymentCause: {
    type: 'string',
    enum: [...DEPLOYMENT_CAUSES],
    description:
      'NONE: no specific cause; TARGET_NOT_FOUND: the device does not exist (or belongs to another company); WHAT_NOT_FOUND: the scenario or version does not exist; ALREADY_DEPLOYED; ALREADY_UNDEPLOYED; NOT_IMPLEMENTED: unsupported target or what type.',
  },
  DeploymentRequest: {
    type: 'object',
    properties: { target: ref('schemas', 'DeploymentTarget'), what: ref('schemas', 'DeploymentWhat'), action: ref('schemas', 'DeploymentAction') },
    required: ['target', 'what', 'action'],
  },
  DeploymentRequestBody: {
    type: 'object',
    properties: {
      requests: {
        type: 'array',
        minItems: 1,
        maxItems: MAX_DEPLOYMENT_ENTRIES,
        items: ref('schemas', 'DeploymentRequest'),
        description: 'One entry per target/scenario pair; several scenarios and several versions of one scenario may be sent together.',
      },
      note: { type: 'string', maxLength: 2000, description: 'Free text giving the reason for the deployment; kept in the history.' },
    },
    required: ['requests'],
  },
  DeploymentResultItem: {
    type: 'object',
    properties: {
      id: text('Deployment identifier (ULID of this action).'),
      target: ref('schemas', 'DeploymentTarget'),
      what: ref('schemas', 'DeploymentWhat'),
      action: ref('schemas', 'DeploymentAction'),
      state: { type: 'string', enum: ['SUCCESS', 'FAILURE'] },
      cause: { description: 'null on SUCCESS; the failure cause on FAILURE.', anyOf: [ref('schemas', 'DeploymentCause'), { type: 'null' }] },
    },
    required: ['id', 'target', 'what', 'action', 'state', 'cause'],
  },
  DeploymentResultList: {
    type: 'object',
    properties: {
      items: { type: 'array', items: ref('schemas', 'DeploymentResultItem'), description: 'One item per request entry, in request order.' },
      dryRun: { type: 'boolean', description: 'true when nothing was written (`dryRun=true`): the items say what would have happened.' },
    },
    required: ['items', 'dryRun'],
  },
  ActiveDeployment: {
    description: 'An active deployment: a successful DEPLOY result item plus when, by whom and why.',
    allOf: [
      ref('schemas', 'DeploymentResultItem'),
      {
        type: 'object',
        properties: {
          action: { const: 'DEPLOY' },
          state: { const: 'SUCCESS' },
          cause: { type: 'null' },
          deployedAt: dateTime('When it was deployed.'),
          deployedBy: text('`sub` of the caller who deployed it.'),
          note: { type: ['string', 'null'], description: 'The note of the deployment request, or null.' },
        },
        required: ['deployedAt', 'deployedBy', 'note'],
      },
    ],
  },
  ActiveDeploymentPage: {
    type: 'object',
    properties: {
      items: { type: 'array', items: ref('schemas', 'ActiveDeployment') },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` to get the next page; null on the last page.' },
    },
    required: ['items', 'nextCursor'],
  },
  DeploymentHistoryEntry: {
    description: 'One attempted action, successful or not: the result item it got, plus when, by whom and why.',
    allOf: [
      ref('schemas', 'DeploymentResultItem'),
      {
        type: 'object',
        properties: {
          at: dateTime('When the request was made.'),
          by: text('`sub` of the caller who made it.'),
          note: { type: ['string', 'null'], description: 'The note of the deployment request, or null.' },
        },
        required: ['at', 'by', 'note'],
      },
    ],
  },
  DeploymentHistoryPage: {
    type: 'object',
    properties: {
      items: { type: 'array', items: ref('schemas', 'DeploymentHistoryEntry'), description: 'Newest first.' },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor`, with the same filters, to get the next page; null on the last page.' },
    },
    required: ['items', 'nextCursor'],
  },
};

const manifestSchema = (() => {
  const { $id: _id, $schema: _schema, ...schema } = scenarioManifestJsonSchema();
  return schema;
})();

const scenarioSchemas: Json = {
  ScenarioManifest: { ...manifestSchema, description: 'Contents of scenario.json at the root of a scenario archive.' },
  ScenarioUploadForm: {
    type: 'object',
    properties: {
      payload: { type: 'string', format: 'binary', contentMediaType: 'application/zip', description: 'The customized scenario archive (ZIP).' },
    },
    required: ['payload'],
  },
  StoredScenario: {
    type: 'object',
    description: 'The stored scenario version.',
    properties: {
      id: text('Scenario identifier (`what.id`).'),
      version: text('Scenario version (`what.subId`).'),
      name: text('Display name from scenario.json.'),
      size: { type: 'integer', minimum: 0, description: 'Archive size, bytes.' },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Hex SHA-256 of the archive.' },
      created: dateTime('Upload time.'),
    },
    required: ['id', 'version', 'name', 'size', 'sha256', 'created'],
  },
};

const catalogSchemas: Json = {
  Scenario: {
    type: 'object',
    description: 'A scenario of the company and the versions stored.',
    properties: {
      id: { type: 'string', pattern: IDENTIFIER_PATTERN.source, description: 'Scenario identifier (`id` of scenario.json, `what.id`).' },
      name: text('Display name from the latest upload.'),
      description: { type: ['string', 'null'], description: 'Description from the latest upload, or null.' },
      latestVersion: text('Highest semantic version stored (SemVer precedence, not upload order).'),
      versions: { type: 'array', items: { type: 'string' }, description: 'Stored versions, in upload order.' },
      created: dateTime('First upload.'),
      updated: dateTime('Latest upload.'),
    },
    required: ['id', 'name', 'description', 'latestVersion', 'versions', 'created', 'updated'],
  },
  ScenarioPage: {
    type: 'object',
    properties: {
      items: { type: 'array', items: ref('schemas', 'Scenario'), description: 'Scenarios ordered by id.' },
      nextCursor: { type: ['string', 'null'], description: 'Pass as `cursor` to get the next page; null on the last page.' },
    },
    required: ['items', 'nextCursor'],
  },
  ScenarioVersion: {
    type: 'object',
    description: 'A stored, immutable scenario version.',
    properties: {
      version: { type: 'string', pattern: SEMVER_PATTERN.source, description: 'Semantic version (`version` of scenario.json, `what.subId`).' },
      size: { type: 'integer', minimum: 0, description: 'Archive size, bytes.' },
      sha256: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'Hex SHA-256 of the archive.' },
      uploadedBy: text('`sub` of the uploader.'),
      created: dateTime('Upload time.'),
      download: {
        type: 'object',
        description: `A presigned URL to GET the archive (\`{scenarioId}-{version}.zip\`) without a bearer token; valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes.`,
        properties: { url: { type: 'string', format: 'uri' }, expiresAt: dateTime('When the URL stops working.') },
        required: ['url', 'expiresAt'],
      },
    },
    required: ['version', 'size', 'sha256', 'uploadedBy', 'created', 'download'],
  },
  ScenarioDetail: {
    type: 'object',
    description: 'A scenario and every stored version.',
    properties: {
      id: { type: 'string', pattern: IDENTIFIER_PATTERN.source, description: 'Scenario identifier.' },
      name: text('Display name from the latest upload.'),
      description: { type: ['string', 'null'], description: 'Description from the latest upload, or null.' },
      latestVersion: text('Highest semantic version stored (SemVer precedence, not upload order).'),
      created: dateTime('First upload.'),
      updated: dateTime('Latest upload.'),
      versions: { type: 'array', items: ref('schemas', 'ScenarioVersion'), description: 'Stored versions, in upload order.' },
    },
    required: ['id', 'name', 'description', 'latestVersion', 'created', 'updated', 'versions'],
  },
  StorageUsage: {
    type: 'object',
    description: "The company's storage account for scenario archives: the figures a 413 reports.",
    properties: {
      quotaBytes: { type: 'integer', minimum: 0, description: 'Storage quota, bytes.' },
      usedBytes: { type: 'integer', minimum: 0, description: 'Bytes of stored archives (the sum of every stored version\'s size).' },
      availableBytes: { type: 'integer', minimum: 0, description: '`quotaBytes - usedBytes` (never below 0).' },
    },
    required: ['quotaBytes', 'usedBytes', 'availableBytes'],
  },
};

const uploadSlotSchemas: Json = {
  UploadSlotGrant: {
    type: 'object',
    description: 'Where and how to PUT a large archive: send it with `method` to `url` with `headers`, before `expiresAt`.',
    properties: {
      uploadId: text('Upload identifier (ULID); read its outcome at the Location address.'),
      url: { type: 'string', format: 'uri', description: 'Presigned S3 URL (s3rver locally).' },
      method: { type: 'string', enum: ['PUT'] },
      headers: { type: 'object', additionalProperties: { type: 'string' }, description: 'Headers the PUT must carry.' },
      expiresAt: dateTime('When the URL stops working: an archive arriving later is rejected (`expired`). 15 minutes after the request.'),
    },
    required: ['uploadId', 'url', 'method', 'headers', 'expiresAt'],
  },
  UploadSlotStatus: {
    type: 'object',
    description:
      'PENDING until the archive has been PUT and validated; then STORED with the 201 body of a direct upload in `result`, or REJECTED with a problem in `problem`: the 409, 413 or 422 problem a direct upload would get, or 410 `Upload Not Completed` with `reason` `expired` (no archive arrived before `expiresAt`; one arriving later is deleted unread) or `interrupted` (the archive arrived but its validation never completed). An upload still unfinished a few minutes after its deadline is rejected this way and its object deleted; nothing is stored or charged.',
    properties: {
      uploadId: text('Upload identifier.'),
      status: { type: 'string', enum: ['PENDING', 'STORED', 'REJECTED'] },
      created: dateTime('When the slot was granted.'),
      expiresAt: dateTime('When the presigned URL expires.'),
      result: ref('schemas', 'StoredScenario'),
      problem: {
        type: 'object',
        description: 'An RFC 9457 problem body: status 409, 413 or 422 as for a direct upload, or 410 with `reason` for an upload that never completed.',
        properties: {
          status: { type: 'integer', enum: [409, 410, 413, 422] },
          reason: { type: 'string', enum: ['expired', 'interrupted'], description: 'With status 410 only: why the upload never completed.' },
        },
      },
    },
    required: ['uploadId', 'status', 'created', 'expiresAt'],
  },
};

const authSchemas: Json = {
  TokenRequest: {
    type: 'object',
    properties: { username: { type: 'string', minLength: 1, maxLength: 256 }, password: { type: 'string', minLength: 1, maxLength: 1024, format: 'password' } },
    required: ['username', 'password'],
  },
  TokenResponse: {
    type: 'object',
    properties: {
      access_token: text('The JWT to send as `Authorization: Bearer <access_token>`.'),
      token_type: { const: 'Bearer' },
      expires_in: { type: 'integer', minimum: 1, description: 'Token lifetime, seconds.' },
    },
    required: ['access_token', 'token_type', 'expires_in'],
  },
  JsonWebKey: {
    type: 'object',
    description: 'A public JSON Web Key (RFC 7517).',
    properties: {
      kty: { type: 'string', enum: ['RSA', 'EC', 'OKP'] },
      kid: { type: 'string' },
      use: { type: 'string' },
      alg: { type: 'string', enum: [...ACCEPTED_ALGORITHMS] },
      n: { type: 'string' },
      e: { type: 'string' },
      crv: { type: 'string' },
      x: { type: 'string' },
      y: { type: 'string' },
    },
    required: ['kty'],
  },
  JsonWebKeySet: {
    type: 'object',
    properties: { keys: { type: 'array', items: ref('schemas', 'JsonWebKey') } },
    required: ['keys'],
  },
};

/* ----------------------------------------------------------------------------------------------------------------
 * Parameters, headers, bodies
 * -------------------------------------------------------------------------------------------------------------- */

function filterParameter(field: FilterField): Json {
  const values = field.values;
  const description = {
    fixed: 'Accepted values are listed in the schema.',
    data: 'Values come from the indexed data; see GET /resources/search/filters for the current ones.',
    companies: "Restricts the search to some of the caller's companies; a company outside the token gives 403. Without it the search covers every company of the caller.",
  }[values.kind];
  return {
    name: field.field,
    in: 'query',
    required: false,
    style: 'form',
    explode: true,
    description: `Filter on \`${field.field}\`${field.scope === null ? '' : ` (${field.scope} resources)`}; repeat for several values (OR-ed). Different filter fields are AND-ed. Ignored when \`global\` is present. ${description}`,
    schema: { type: 'array', items: values.kind === 'fixed' ? { type: 'string', enum: [...values.list] } : { type: 'string', minLength: 1 } },
  };
}

const parameters: Json = {
  CompanyId: { name: 'companyId', in: 'path', required: true, description: 'Company identifier; must be one of the token\'s `companies`.', schema: { type: 'string' } },
  DeviceId: {
    name: 'deviceId',
    in: 'path',
    required: true,
    description: 'Device identifier (the literal `DEVICE` lists every device instead, see the other path).',
    schema: { type: 'string' },
  },
  ScenarioId: { name: 'scenarioId', in: 'path', required: true, description: 'Scenario identifier (`id` of scenario.json).', schema: { type: 'string' } },
  ScenarioVersion: {
    name: 'version',
    in: 'path',
    required: true,
    description: 'Scenario version (`version` of scenario.json).',
    schema: { type: 'string' },
  },
  SkeletonVersion: {
    name: 'version',
    in: 'query',
    required: false,
    description: 'Semantic version written to scenario.json of the skeleton.',
    schema: { type: 'string', pattern: SEMVER_PATTERN.source, default: DEFAULT_SKELETON_VERSION },
  },
  Limit: {
    name: 'limit',
    in: 'query',
    required: false,
    description: 'Page size.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_LIST_LIMIT, default: DEFAULT_LIST_LIMIT },
  },
  Cursor: {
    name: 'cursor',
    in: 'query',
    required: false,
    description:
      'The `nextCursor` of the previous page, unchanged, with the same filters. Cursors are signed for the listing, company and ' +
      'filters that issued them: a cursor altered, made up, empty or issued for another listing gives 400 naming `cursor` ' +
      '(start over without it).',
    schema: { type: 'string', minLength: 1 },
  },
  HistoryDeviceId: {
    name: 'deviceId',
    in: 'query',
    required: false,
    description: 'Only actions on this device (`target.id`). A device of another company has no history here.',
    schema: { type: 'string', minLength: 1, maxLength: MAX_HISTORY_ID_LENGTH },
  },
  HistoryScenarioId: {
    name: 'scenarioId',
    in: 'query',
    required: false,
    description: 'Only actions on this scenario (`what.id`).',
    schema: { type: 'string', minLength: 1, maxLength: MAX_HISTORY_ID_LENGTH },
  },
  HistoryVersion: {
    name: 'version',
    in: 'query',
    required: false,
    description: 'Only actions on this version (`what.subId`) of `scenarioId`, which it requires (400 without it).',
    schema: { type: 'string', minLength: 1, maxLength: MAX_HISTORY_ID_LENGTH },
  },
  HistoryFrom: {
    name: 'from',
    in: 'query',
    required: false,
    description: 'Inclusive lower bound: actions recorded at or after this ISO-8601 instant (time zone required, e.g. `2025-03-01T12:00:00Z`).',
    schema: { type: 'string', format: 'date-time' },
  },
  HistoryTo: {
    name: 'to',
    in: 'query',
    required: false,
    description: 'Exclusive upper bound: actions recorded before this ISO-8601 instant; must be after `from` (400 otherwise).',
    schema: { type: 'string', format: 'date-time' },
  },
  Page: {
    name: 'page',
    in: 'query',
    required: false,
    description: `1-based page number; page × pageSize may not exceed ${MAX_RESULT_WINDOW}.`,
    schema: { type: 'integer', minimum: 1, default: 1 },
  },
  PageSize: {
    name: 'pageSize',
    in: 'query',
    required: false,
    description: 'Resources per page.',
    schema: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE },
  },
  Sort: {
    name: 'sort',
    in: 'query',
    required: false,
    description: 'Field to sort on. Default `serial`; with `global` and no `sort`, results come in relevance order (most relevant first).',
    schema: { type: 'string', enum: [...SORT_FIELDS], default: 'serial' },
  },
  Direction: {
    name: 'direction',
    in: 'query',
    required: false,
    description: 'Sort direction. Default ASC (relevance order is always DESC).',
    schema: { type: 'string', enum: ['ASC', 'DESC'], default: 'ASC' },
  },
  Global: {
    name: 'global',
    in: 'query',
    required: false,
    description: 'Full-text query over serial, location, names and versions. When present every filter parameter is ignored; only pagination and sorting apply.',
    schema: { type: 'string' },
  },
  ResourceType: {
    name: 'type',
    in: 'query',
    required: false,
    description: 'Restricts the filters (and their counts) to one resource type.',
    schema: { type: 'string', enum: [...RESOURCE_TYPES] },
  },
  ...Object.fromEntries(FILTER_FIELDS.map((field) => [filterParameterName(field), filterParameter(field)])),
};

const headers: Json = {
  'WWW-Authenticate': {
    description: 'Bearer challenge (RFC 6750), e.g. `Bearer error="invalid_token", error_description="..."`.',
    schema: { type: 'string' },
  },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  Location: { description: 'Path of the stored scenario version.', schema: { type: 'string', format: 'uri-reference' } },
  'Content-Disposition': { description: 'attachment; filename="<scenario id>-<version>.zip"', schema: { type: 'string' } },
  'Cache-Control': { schema: { type: 'string' } },
  Allow: { description: 'The methods the path supports on this address, comma-separated (RFC 9110), e.g. `GET`.', schema: { type: 'string' } },
};

const requestBodies: Json = {
  DeploymentRequestBody: {
    required: true,
    content: { 'application/json': { schema: ref('schemas', 'DeploymentRequestBody') } },
  },
  ScenarioUpload: {
    required: true,
    description: "Multipart form with exactly one file part named `payload`: the customized ZIP archive.",
    content: {
      'multipart/form-data': {
        schema: ref('schemas', 'ScenarioUploadForm'),
        encoding: { payload: { contentType: 'application/zip' } },
      },
    },
  },
  TokenRequest: {
    required: true,
    content: { 'application/json': { schema: ref('schemas', 'TokenRequest') } },
  },
};

/* ----------------------------------------------------------------------------------------------------------------
 * Operations, keyed by route id (functions/contract/routes.ts)
 * -------------------------------------------------------------------------------------------------------------- */

const json = (schema: Json, mediaType = 'application/json'): Json => ({ [mediaType]: { schema } });

/** Responses every authenticated operation can give besides its own. */
function authenticatedResponses(): Json {
  return {
    '400': ref('responses', 'BadRequest'),
    '401': ref('responses', 'Unauthorized'),
    '403': ref('responses', 'Forbidden'),
    '500': ref('responses', 'InternalServerError'),
    '503': ref('responses', 'ServiceUnavailable'),
  };
}

/** An operation that needs a bearer token with `scope`. */
function authenticated(scope: Scope, operation: Json & { responses: Json }): Json {
  const { responses, ...rest } = operation;
  return {
    ...rest,
    security: [{ bearerAuth: [scope] }],
    'x-required-scope': scope,
    responses: { ...authenticatedResponses(), ...responses },
  };
}

function operations(): Record<string, Json> {
  return {
    ScenarioSkeleton: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: 'Download a skeleton scenario archive',
      description: 'A ZIP with scenario.json (fresh `id`, the requested `version`), resources/thumbnails, resources/assets and a README explaining each file. Needs `scenarios:read` on the company.',
      parameters: [ref('parameters', 'CompanyId'), ref('parameters', 'SkeletonVersion')],
      responses: {
        '200': {
          description: 'The skeleton archive.',
          headers: { 'Content-Disposition': ref('headers', 'Content-Disposition') },
          content: json({ type: 'string', format: 'binary', contentMediaType: 'application/zip' }, 'application/zip'),
        },
      },
    }),
    ScenarioSchema: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: 'Get the JSON Schema of scenario.json',
      description: 'The JSON Schema (draft 2020-12) that uploaded scenario.json files must satisfy; the same as `#/components/schemas/ScenarioManifest`. Needs `scenarios:read` on the company.',
      parameters: [ref('parameters', 'CompanyId')],
      responses: {
        '200': {
          description: 'A JSON Schema document.',
          content: { 'application/schema+json': { schema: { type: 'object', description: 'A JSON Schema (draft 2020-12).' }, example: scenarioManifestJsonSchema() } },
        },
      },
    }),
    ScenarioUpload: authenticated('scenarios:write', {
      tags: ['Scenarios'],
      summary: 'Upload a scenario archive',
      description:
        "Validates the archive, then stores it as a new scenario version. Uploading a new `version` with an existing `id` adds a version; re-uploading an existing (`id`, `version`) gives 409. A refused upload stores nothing and consumes no quota. Needs `scenarios:write` on the company.",
      parameters: [ref('parameters', 'CompanyId')],
      requestBody: ref('requestBodies', 'ScenarioUpload'),
      responses: {
        '201': {
          description: 'Stored and ready for deployment.',
          headers: { Location: ref('headers', 'Location') },
          content: json(ref('schemas', 'StoredScenario')),
        },
        '404': { ...ref('responses', 'NotFound'), description: 'The company does not exist.' },
        '409': ref('responses', 'Conflict'),
        '413': ref('responses', 'PayloadTooLarge'),
        '422': ref('responses', 'UnprocessableArchive'),
      },
    }),
    ScenarioUploadSlot: authenticated('scenarios:write', {
      tags: ['Scenarios'],
      summary: 'Request a presigned upload slot for a large archive',
      description:
        'For archives above the 4 MiB limit of direct uploads: PUT the archive to the returned presigned URL; the S3 object-created event runs the same validation, quota and immutability rules as a direct upload. Poll the Location address for the outcome. Needs `scenarios:write` on the company.',
      parameters: [ref('parameters', 'CompanyId')],
      responses: {
        '201': { description: 'The upload slot.', headers: { Location: ref('headers', 'Location') }, content: json(ref('schemas', 'UploadSlotGrant')) },
        '404': { ...ref('responses', 'NotFound'), description: 'The company does not exist.' },
      },
    }),
    ScenarioUploadStatus: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: 'Read the outcome of a presigned upload',
      description: 'PENDING, STORED (with the 201 body) or REJECTED (with the 409/413/422 problem). Needs `scenarios:read` on the company.',
      parameters: [ref('parameters', 'CompanyId'), { name: 'uploadId', in: 'path', required: true, description: 'Upload identifier from the slot.', schema: { type: 'string' } }],
      responses: {
        '200': { description: 'The upload\'s status.', content: json(ref('schemas', 'UploadSlotStatus')) },
        '404': { ...ref('responses', 'NotFound'), description: 'The company has no such upload.' },
      },
    }),
    ScenarioList: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: "List the company's scenarios",
      description: 'Scenarios ordered by id, with their stored versions, paginated with `limit` and `cursor`. Needs `scenarios:read` on the company.',
      parameters: [ref('parameters', 'CompanyId'), ref('parameters', 'Limit'), ref('parameters', 'Cursor')],
      responses: { '200': { description: 'A page of scenarios.', content: json(ref('schemas', 'ScenarioPage')) } },
    }),
    ScenarioGet: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: 'Get a scenario and its versions',
      description: `Every stored version with its size, SHA-256, uploader, upload time and a presigned download URL valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes. Needs \`scenarios:read\` on the company.`,
      parameters: [ref('parameters', 'CompanyId'), ref('parameters', 'ScenarioId')],
      responses: {
        '200': { description: 'The scenario.', content: json(ref('schemas', 'ScenarioDetail')) },
        '404': { ...ref('responses', 'NotFound'), description: 'The company has no such scenario.' },
      },
    }),
    ScenarioVersionGet: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: 'Get a scenario version',
      description: `The address a 201 upload's \`Location\` points to: the version's size, SHA-256, uploader, upload time and a presigned download URL valid ${DOWNLOAD_URL_LIFETIME_SECONDS / 60} minutes. Needs \`scenarios:read\` on the company.`,
      parameters: [ref('parameters', 'CompanyId'), ref('parameters', 'ScenarioId'), ref('parameters', 'ScenarioVersion')],
      responses: {
        '200': { description: 'The version.', content: json(ref('schemas', 'ScenarioVersion')) },
        '404': { ...ref('responses', 'NotFound'), description: 'The company has no such scenario version.' },
      },
    }),
    ScenarioUsage: authenticated('scenarios:read', {
      tags: ['Scenarios'],
      summary: "Get the company's storage usage",
      description: 'The storage quota, the bytes used by stored archives and the bytes available: the figures a 413 upload answer reports. Needs `scenarios:read` on the company.',
      parameters: [ref('parameters', 'CompanyId')],
      responses: {
        '200': { description: 'The storage account.', content: json(ref('schemas', 'StorageUsage')) },
        '404': { ...ref('responses', 'NotFound'), description: 'The company does not exist.' },
      },
    }),
    DeploymentsExecute: authenticated('deployments:write', {
      tags: ['Deployments'],
      summary: 'Deploy or undeploy scenario versions on devices',
      description:
        'Carries out each request entry (at most 5,000) and reports one result item per entry, in request order; per-item failures are reported with state FAILURE and a cause, and the status stays 200. Entries with the same (device, scenario, version) run one after another, in order. A structurally invalid body gives 400 and more than 5,000 entries 413; both change nothing. `dryRun=true` answers what would happen without writing anything. Each SUCCESS emits a `DeploymentChanged` event (EventBridge in AWS; the local bus appends to `.data/events/events.jsonl`). With an `Idempotency-Key` header (1 to 255 characters; empty or longer gives 400 before anything runs), a retry returns the first response (marked `Idempotent-Replayed: true`) without executing again, whatever its size; keys are scoped per company and kept 24 h. Should storing the response fail, the response is still returned and a retry with the key executes again, which is safe: each entry is a conditional write. Needs `deployments:write` on the company.',
      parameters: [
        ref('parameters', 'CompanyId'),
        { name: 'dryRun', in: 'query', required: false, description: 'true: report what would happen, write nothing.', schema: { type: 'boolean', default: false } },
        {
          name: 'Idempotency-Key', in: 'header', required: false,
          description: 'A string of 1 to 255 characters chosen by the client for this request; a retry with the same key and the same body returns the first response without executing again (24 h, per company). An empty or longer key gives 400.',
          schema: { type: 'string', minLength: 1, maxLength: 255 },
        },
      ],
      requestBody: ref('requestBodies', 'DeploymentRequestBody'),
      responses: {
        '200': {
          description: 'One result item per request entry.',
          headers: { 'Idempotent-Replayed': { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } } },
          content: json(ref('schemas', 'DeploymentResultList')),
        },
        '400': {
          ...ref('responses', 'BadRequest'),
          description: 'Bad Request: a body that is not valid, a `dryRun` other than true or false, or an `Idempotency-Key` that is empty or longer than 255 characters (`errors[].path` `Idempotency-Key`). Nothing was changed.',
        },
        '409': {
          description: 'Conflict: a request with this Idempotency-Key is still being processed; retry shortly to get its response.',
          content: problemContent(ref('schemas', 'ConflictProblem')),
        },
        '413': {
          description: 'Content Too Large: more than 5,000 entries; split the request. Nothing was changed.',
          content: problemContent(ref('schemas', 'PayloadTooLargeProblem')),
        },
        '422': {
          description: 'Unprocessable: the Idempotency-Key was already used with a different body or query.',
          content: problemContent(ref('schemas', 'UnprocessableRequestProblem')),
        },
        '503': {
          ...ref('responses', 'ServiceUnavailable'),
          description: 'A backend is unavailable, e.g. the Idempotency-Key store before the request ran (nothing was changed). Retry after `Retry-After` seconds, with the same key.',
        },
      },
    }),
    DeploymentsListAll: authenticated('deployments:read', {
      tags: ['Deployments'],
      summary: 'List active deployments of every device of the company',
      description: 'Only successful deployments that are still active, ordered by (device, scenario, version). Needs `deployments:read` on the company.',
      parameters: [ref('parameters', 'CompanyId'), ref('parameters', 'Limit'), ref('parameters', 'Cursor')],
      responses: { '200': { description: 'A page of active deployments.', content: json(ref('schemas', 'ActiveDeploymentPage')) } },
    }),
    DeploymentsListDevice: authenticated('deployments:read', {
      tags: ['Deployments'],
      summary: 'List active deployments of one device',
      description: 'Only successful deployments that are still active, ordered by (scenario, version). Needs `deployments:read` on the company.',
      parameters: [ref('parameters', 'CompanyId'), ref('parameters', 'DeviceId'), ref('parameters', 'Limit'), ref('parameters', 'Cursor')],
      responses: {
        '200': { description: 'A page of active deployments.', content: json(ref('schemas', 'ActiveDeploymentPage')) },
        '404': { ...ref('responses', 'NotFound'), description: 'The device does not exist in the company.' },
      },
    }),
    DeploymentsHistory: authenticated('deployments:read', {
      tags: ['Deployments'],
      summary: 'List the deployment history',
      description:
        "Every DEPLOY and UNDEPLOY attempted in the company, successful or not, newest first, with who made it, when, the request's note, the outcome and the cause. Filters combine (AND); `version` needs `scenarioId`; `from` is inclusive and `to` exclusive. Unknown, repeated or malformed parameters, `version` without `scenarioId`, `from` not before `to` and a cursor issued for another listing give 400 naming each parameter. Needs `deployments:read` on the company.",
      parameters: [
        ref('parameters', 'CompanyId'),
        ref('parameters', 'HistoryDeviceId'),
        ref('parameters', 'HistoryScenarioId'),
        ref('parameters', 'HistoryVersion'),
        ref('parameters', 'HistoryFrom'),
        ref('parameters', 'HistoryTo'),
        ref('parameters', 'Limit'),
        ref('parameters', 'Cursor'),
      ],
      responses: { '200': { description: 'A page of history entries, newest first.', content: json(ref('schemas', 'DeploymentHistoryPage')) } },
    }),
    SearchFilters: authenticated('search:read', {
      tags: ['Search'],
      summary: 'Get the search filters',
      description:
        "Every filter field with its selectable values and live counts, computed within the caller's companies. The search's filter parameters may also be given: each field's counts are then computed as if that field's own selection were removed. Needs `search:read`.",
      parameters: [
        ref('parameters', 'ResourceType'),
        ...FILTER_FIELDS.filter((field) => field.field !== 'type').map((field) => ref('parameters', filterParameterName(field))),
      ],
      responses: { '200': { description: 'The filter descriptors.', content: json(ref('schemas', 'FilterDescriptorList')) } },
    }),
    Search: authenticated('search:read', {
      tags: ['Search'],
      summary: 'Search resources',
      description:
        "Filter mode: one parameter per filter field, repeated for several values; values of one field are OR-ed, different fields AND-ed. Full-text mode: `global` ignores every filter parameter and, without `sort`, orders by relevance. Covers every company of the caller unless `company` narrows it. Needs `search:read`.",
      parameters: [
        ref('parameters', 'Page'),
        ref('parameters', 'PageSize'),
        ref('parameters', 'Sort'),
        ref('parameters', 'Direction'),
        ref('parameters', 'Global'),
        ...FILTER_FIELDS.map((field) => ref('parameters', filterParameterName(field))),
      ],
      responses: { '200': { description: 'One page of matching resources with the effective sort and page.', content: json(ref('schemas', 'SearchResponse')) } },
    }),
    OpenApiDocument: {
      tags: ['Meta'],
      summary: 'This OpenAPI document',
      security: [],
      responses: {
        '200': { description: 'The OpenAPI 3.1 description of the service.', content: json({ type: 'object' }) },
        '500': ref('responses', 'InternalServerError'),
      },
    },
    AuthToken: {
      tags: ['Authentication'],
      summary: 'Get an access token',
      description: 'Exchanges a username and password for a JWT to use as the bearer token on the other addresses.',
      security: [],
      requestBody: ref('requestBodies', 'TokenRequest'),
      responses: {
        '200': {
          description: 'The access token.',
          headers: { 'Cache-Control': ref('headers', 'Cache-Control') },
          content: json(ref('schemas', 'TokenResponse')),
        },
        '400': ref('responses', 'BadRequest'),
        '401': { ...ref('responses', 'Unauthorized'), description: 'The username or password is wrong.' },
        '500': ref('responses', 'InternalServerError'),
        '503': { ...ref('responses', 'ServiceUnavailable'), description: 'On AWS: Amazon Cognito throttles sign-ins. Retry after `Retry-After` seconds.' },
      },
    },
    AuthJwks: {
      tags: ['Authentication'],
      summary: "The issuer's public keys",
      description: 'The JSON Web Key Set used to verify access tokens.',
      security: [],
      responses: {
        '200': {
          description: 'The key set.',
          headers: { 'Cache-Control': ref('headers', 'Cache-Control') },
          content: json(ref('schemas', 'JsonWebKeySet'), 'application/jwk-set+json'),
        },
        '500': ref('responses', 'InternalServerError'),
      },
    },
  };
}

/**
 * The OpenAPI 3.1 document of the whole service: one operation per route of functions/contract/routes.ts (its `id` is the
 * `operationId`); upload and auth paths (or operations, on a path shared with the main API) carry their own `servers`.
 * @param baseUrls base URL of an address (e.g. `https://abc.execute-api.eu-west-1.amazonaws.com`) when it is not in
 *   MAIN_API_URL, UPLOAD_API_URL or AUTH_API_URL; otherwise those, or else the local default ports 3000-3002.
 * @throws Error when a route has no operation description (a programming error caught by the unit tests).
 */
export function openApiDocument(baseUrls: Partial<Record<ApiName, string>> = {}): Record<string, unknown> {
  const SERVERS = serversOf(baseUrls);
  const byId = operations();
  const paths: Record<string, Json> = {};
  // A path served by one address carries that address's `servers`; a path served by several (GET on the main API,
  // POST on the upload API) gives each operation outside the main API its own `servers` instead.
  const addresses = new Map<string, Set<ApiName>>();
  for (const route of ROUTES) addresses.set(route.path, (addresses.get(route.path) ?? new Set<ApiName>()).add(route.api));
  for (const route of ROUTES) {
    const operation = byId[route.id];
    if (operation === undefined) throw new Error(`No OpenAPI operation for route ${route.id} (${route.method} ${route.path}).`);
    const shared = (addresses.get(route.path)?.size ?? 1) > 1;
    const item = (paths[route.path] ??= route.api === 'main' || shared ? {} : { servers: [SERVERS[route.api]] });
    item[route.method.toLowerCase()] = {
      operationId: route.id,
      ...(shared && route.api !== 'main' ? { servers: [SERVERS[route.api]] } : {}),
      ...operation,
      // Any request can carry too large headers; the gateway refuses them before routing.
      responses: { ...(operation.responses as Json), '431': ref('responses', 'RequestHeaderFieldsTooLarge') },
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    info: { title: 'Device scenario deployment and search service', version: '0.1.0', description: INFO_DESCRIPTION },
    servers: [SERVERS.main],
    security: [{ bearerAuth: [] }],
    tags: [
      { name: 'Scenarios', description: 'Scenario packages: skeleton, schema, upload, catalogue, storage usage.' },
      { name: 'Deployments', description: 'Deploying scenario versions to devices.' },
      { name: 'Search', description: 'Filters and search over devices and scenarios.' },
      { name: 'Authentication', description: 'Token issuance and key set (authentication address).' },
      { name: 'Meta', description: 'This document.' },
    ],
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
      schemas: { ...problemSchemas, ...deviceSchemas, ...searchSchemas, ...deploymentSchemas, ...scenarioSchemas, ...catalogSchemas, ...uploadSlotSchemas, ...authSchemas },
      responses: problemResponses,
      parameters,
      headers,
      requestBodies,
    },
  };
}
