/**
 * One definition per HTTP route: where it is (address, method, path), who may call it (scope), what its function may
 * touch (access), and zod schemas of every input and every response. From it follow the local gateway's and API
 * Gateway's routes, the handler's validated input, the scope check of the middleware stack, the IAM grants of the
 * route's function and the OpenAPI document. Plain data and zod only: the CDK app, the local runtime and the handlers
 * all import it.
 */
import type { z } from 'zod';
import type { ProblemViolation } from '../core/shared/errors.js';
import type { Scope } from '../core/shared/principal.js';
import type { TableName } from './tables.js';

/** The tables a function may be granted: the stateful stack's tables, by logical name (functions/contract/tables.ts). */
export type { TableName };

/** Which address a route belongs to (docs/contract.md, "Addresses"). */
export type ApiName = 'main' | 'upload' | 'auth';

/** An HTTP method of a route. */
export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * A table grant: read, read-write, write-only (puts, updates and deletes without reads), or `Item`: single items by
 * key only (get, put, update, delete), no Query, Scan or batch, for a function that only ever names the item it
 * touches.
 */
export type TableAccess = 'R' | 'RW' | 'W' | 'Item';

/** An archive-bucket object action: get (and head), put (and server-side copy target), delete. */
export type ObjectAction = 'get' | 'put' | 'delete';

/**
 * What a function may do on the OpenSearch domain, each level limited to the paths its calls use (the domain's access
 * policy names the function's role with exactly these):
 * - `search`: `GET`/`POST <alias>/_search` only (searches and filter counts);
 * - `index`: `POST <alias>/_bulk` only (the stream consumer's upserts and deletes);
 * - `admin`: every HTTP method on every path of the domain (index template, new concrete indexes, the `_aliases`
 *   switch, deleting old indexes: the setup custom resource and the reindex).
 */
export type SearchAccess = 'search' | 'index' | 'admin';

/**
 * What a function may do with the device token key (a KMS key whose key policy names the function's role): `sign`
 * digests (the token function), or read its `publicKey` (the device issuer's key set).
 */
export type DeviceKeyUse = 'sign' | 'publicKey';

/** The Cognito user pool actions administration may be granted (cognito-idp IAM actions). */
export type CognitoAdminAction =
  | 'AdminCreateUser'
  | 'AdminGetUser'
  | 'ListUsers'
  | 'AdminUpdateUserAttributes'
  | 'AdminDisableUser'
  | 'AdminEnableUser'
  | 'AdminDeleteUser'
  | 'AdminResetUserPassword'
  | 'AdminSetUserPassword'
  | 'AdminUserGlobalSignOut';

/** What the function of a route (or of an event) may touch; everything else is denied. */
export interface FunctionAccess {
  /**
   * The handler uses the composition root's storage (`storage()`, `archiveStorage()` or `services()` of
   * functions/platform/composition/), whose configuration requires every table and bucket name at cold start. Names
   * are not permissions: grants come only from `tables` and `bucket`.
   */
  storage: boolean;
  /** Table grants (each also gives the table's name variable). */
  tables?: Partial<Record<TableName, TableAccess>>;
  /** Archive object actions by key pattern (`uploads/*`, `companies/*`); deletes are never granted on `*`. */
  bucket?: Readonly<Record<string, readonly ObjectAction[]>>;
  /** `s3:GetObject` only on the objects matching this pattern: what presigning downloads needs. */
  bucketGetObjectKeyPattern?: string;
  /** Publishes events on the service's bus (EVENT_BUS_NAME, events:PutEvents). */
  events?: boolean;
  /** Sends rollout work messages to the rollout queue (ROLLOUT_QUEUE_URL, sqs:SendMessage). */
  rolloutQueue?: boolean;
  /** Pages a listing: signs and verifies cursors with CURSOR_SIGNING_KEY. */
  pagesListings?: boolean;
  /**
   * Uses the search index at this level (OPENSEARCH_* variables, and a role the domain's access policy names with the
   * level's paths). On AWS the domain refuses a function without it; the synth fails when the two stacks disagree
   * on who has it.
   */
  search?: SearchAccess;
  /** Uses the device token key (DEVICE_TOKEN_* variables, a role its key policy names); see DeviceKeyUse. */
  deviceKey?: DeviceKeyUse;
  /**
   * Reads the device settings (DEVICE_HEARTBEAT_SECONDS, DEVICE_TOKEN_LIFETIME_SECONDS). A route's function reads
   * them anyway when the route is a device route or touches the presence table.
   */
  deviceSettings?: boolean;
  /** Checks or sends to webhook URLs: reads the webhook settings (WEBHOOK_ALLOWED_HTTP_HOSTS). */
  webhookSettings?: boolean;
  /** Signs users in through the Cognito app client (COGNITO_CLIENT_ID). */
  cognitoClient?: boolean;
  /**
   * Verifies the user pool's access tokens: JWT_ISSUER (the pool's URL), JWT_AUDIENCE (the app client id, which those
   * tokens carry as `client_id`) and JWKS_URL (the pool's keys).
   */
  userTokens?: boolean;
  /**
   * Cognito administration actions on the service's user pool only (COGNITO_USER_POOL_ID, and `cognito-idp:<action>`
   * on that pool's ARN), e.g. `AdminCreateUser`: each function is granted exactly the actions it lists.
   */
  userPool?: readonly CognitoAdminAction[];
  /** Names the three addresses (their API URLs), e.g. for the OpenAPI document's `servers`. */
  apiAddresses?: boolean;
  /** Function timeout, seconds. @default the HTTP maximum (29 s) for routes */
  timeoutSeconds?: number;
  /** Function memory, MB. @default 1024 */
  memorySize?: number;
  /**
   * Files of installed packages the handler reads at run time, as module specifiers
   * (`redoc/bundles/redoc.standalone.js`): the bundler copies each into the function's bundle under `node_modules/` at
   * the same path, so that `createRequire(import.meta.url).resolve` finds it on Lambda as it does locally.
   */
  packageFiles?: readonly string[];
  /**
   * Serves the operator console's built files (console/build.ts): the bundler builds them into the function's bundle
   * under `console/`, where functions/platform/console.ts finds them on Lambda; locally the runtime builds them into
   * the data folder and names it in CONSOLE_DIRECTORY.
   */
  consoleAssets?: boolean;
}

/** One response header of an operation. */
export interface ResponseHeader {
  description: string;
  schema: z.ZodType;
  /** @default false */
  required?: boolean;
}

/** One documented response of an operation. */
export interface RouteResponse {
  description: string;
  /** The body's schema; absent for a body-less response (204, 304). */
  schema?: z.ZodType;
  /** @default 'application/json', or 'application/problem+json' for 4xx/5xx */
  contentType?: string;
  /**
   * Other media types the same status may carry, with their body schemas: e.g. the token endpoint's OAuth error
   * (`application/json`) beside its problem+json 400 and 401.
   */
  alternatives?: Readonly<Record<string, z.ZodType>>;
  headers?: Readonly<Record<string, ResponseHeader>>;
}

/** How a route's request body arrives. */
export type RequestBody =
  | {
      kind: 'json';
      schema: z.ZodType;
      description?: string;
      /** A check run on the parsed JSON before the schema: the 413 `detail` when the body holds too much, else undefined. */
      tooLarge?: (body: unknown) => string | undefined;
      /** The 400 `detail` when the body is invalid (each violation is listed in `errors`). */
      invalidDetail?: string;
      /** Also accepted: an `application/x-www-form-urlencoded` body (see FormBody). */
      form?: FormBody;
      /**
       * The body may be left out (documented as not required): the route's handler reads an absent body as `{}`.
       * @default false
       */
      optional?: boolean;
    }
  | { kind: 'multipart'; schema: z.ZodType; description?: string };

/**
 * The `application/x-www-form-urlencoded` form of a route's body (the OAuth token request): the schema receives an
 * object of the form's members (each given once; a repeated member is a violation), its output becomes the body.
 */
export interface FormBody {
  schema: z.ZodType;
  /** The error thrown when the form is invalid, instead of the 400 problem (e.g. an OAuth `invalid_request`). */
  invalid?: (violations: readonly ProblemViolation[]) => Error;
}

/** The request part of a route: path parameters, query parameters and body, each a zod schema. */
export interface RouteRequest {
  /** Path parameters, decoded (`{companyId}` → `companyId`). */
  params?: z.ZodType;
  /**
   * Query parameters: the handler stack gives the schema an object of the query string's parameters, a parameter given
   * once as a string, a repeated one as an array of its values in order; unknown names must be refused (`.strict()`).
   */
  query?: z.ZodType;
  body?: RequestBody;
}

/** How an `auth` route is served on AWS (RouteDefinition `onAws`). */
export type AwsAuthServing =
  | { kind: 'entry' }
  | {
      kind: 'function';
      entry: string;
      access: FunctionAccess;
      /**
       * Throttled in a bucket of its own (the token route: it bounds what wrong secrets cost in all), apart from the
       * stage's other routes. @default false
       */
      ownThrottle?: boolean;
    }
  | { kind: 'cognito-jwks' };

/** A route of the service: see the module comment. */
export interface RouteDefinition {
  /** Operation id (PascalCase): the OpenAPI `operationId`, and the name of the route's CDK integration. */
  id: string;
  api: ApiName;
  method: RouteMethod;
  /** API Gateway path template, e.g. `/companies/{companyId}/resources/deployments`. */
  path: string;
  /**
   * The permission a caller's token must hold (its `scope` claim): the handler stack checks it (after API Gateway's
   * authorizer on AWS, the local gateway locally, verified the token), and on AWS the device routes' JWT authorizer
   * too. null: a public route (no token).
   */
  scope: Scope | null;
  /**
   * The path parameter naming the company the call acts on: the handler stack refuses (403) a company outside the
   * caller's token before the body is read.
   */
  companyParameter?: string;
  /** Handler module, relative to the repository root; it exports `handler`. */
  entry: string;
  /** What the route's function may touch. */
  access?: FunctionAccess;
  /**
   * How an `auth` route is served on AWS, where the local runtime's issuer is replaced (required of every `auth`
   * route; the synth fails without it): by the route's own `entry` (`entry`), by another function (`function`, with
   * its own access), or by the Cognito pool's key set behind an HTTP proxy (`cognito-jwks`).
   */
  onAws?: AwsAuthServing;
  /** OpenAPI summary (one line) and description (Markdown). */
  summary?: string;
  description?: string;
  /** OpenAPI tags. */
  tags?: readonly string[];
  request?: RouteRequest;
  /** Every status the route answers, with its body and headers. */
  responses?: Readonly<Record<number, RouteResponse>>;
}

/**
 * The route key of a route, as API Gateway's HTTP API names it (payload v2 `routeKey`, stage route settings):
 * `${method} ${path}`, e.g. `GET /admin/users/{username}`. The local gateway sets it and the router reads it.
 */
export function routeKeyOf(route: Pick<RouteDefinition, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

/** Declares a route, keeping its literal types (so a handler's input is typed from its schemas). */
export function defineRoute<const T extends RouteDefinition>(definition: T): T {
  return definition;
}

/** The validated input a handler receives: each part typed by its schema's output. */
export type RouteInput<T extends RouteDefinition> = {
  params: T['request'] extends { params: z.ZodType } ? z.output<T['request']['params']> : Record<string, never>;
  query: T['request'] extends { query: z.ZodType } ? z.output<T['request']['query']> : Record<string, never>;
  body: T['request'] extends { body: { schema: z.ZodType } }
    ?
        | z.output<T['request']['body']['schema']>
        | (T['request']['body'] extends { form: { schema: z.ZodType } } ? z.output<T['request']['body']['form']['schema']> : never)
    : undefined;
};
