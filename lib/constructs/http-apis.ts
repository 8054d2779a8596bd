/**
 * The three HTTP APIs of a stage (docs/contract.md, "Addresses") built from the routes the stack is given: one
 * default stage each with access logs and throttling, every route integrated with its function (routes sharing a
 * handler module share one), behind an authorizer when it has a scope.
 *
 * On AWS the authentication address is served as each `auth` route's `onAws` says: the token route by a function
 * behind the local endpoint's contract (users through the Cognito pool, devices signed by the device token key), the
 * pool's JWKS by an HTTP proxy, the device issuer's documents by their own function. Every user route with a scope is
 * behind the API's bearer authorizer (the Lambda REQUEST authorizer of functions/contract/functions.ts: a user's
 * Cognito access token or an API client's token of the device issuer, answers cached per token; the route's function
 * checks the scope), device routes (scope DEVICE_SCOPE) behind API Gateway's native JWT authorizer trusting only the
 * device issuer `{auth_url}/device` with the route's scope. A bad token never invokes a route's function.
 *
 * Where the resources live: the APIs, their stages, access logs, authorizers and routes are children of the stack
 * itself, so that their logical ids (and so the APIs' URLs) stay those of the stack before it was split into these
 * parts. The functions the routes of an API run (each with its role, policy and log group), their integrations and
 * the permissions API Gateway invokes them with live in a nested stack per API (`MainApiRoutes`, `UploadApiRoutes`,
 * `AuthApiRoutes`): each route costs its stack about seven resources, and CloudFormation allows 500 per stack, nested
 * or not (test/infra/stacks-size.test.ts keeps every stack under 450). The routes stay in the stack so that a
 * stage deployed before the split updates them in place: a route key is unique per API, and a new route created in a
 * nested stack beside the old one would fail the update.
 */
import { Duration, NestedStack, type Stack } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  type CfnStage,
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  type HttpRouteIntegration,
  type HttpRouteIntegrationBindOptions,
  type HttpStage,
  LogGroupLogDestination,
  type ThrottleSettings,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer, HttpLambdaAuthorizer, HttpLambdaResponseType } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration, HttpUrlIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { CORS_ALLOWED_HEADERS, CORS_ALLOWED_METHODS, CORS_EXPOSED_HEADERS, CORS_MAX_AGE_SECONDS } from '../../functions/contract/cors.js';
import { API_ADDRESS_ENV, ENV } from '../../functions/contract/environment.js';
import type { FunctionDefinition, HttpAuthorizerTrigger } from '../../functions/contract/function.js';
import { type ApiName, type FunctionAccess, type RouteDefinition, routeKeyOf } from '../../functions/contract/route.js';
import { DEVICE_ISSUER_PATH } from '../../functions/contract/routes/device-issuer.js';
import { countTokenFailures } from '../monitoring.js';
import { acknowledge } from '../nag.js';
import type { FunctionEnvironment } from '../service-function.js';
import type { ServiceSettings } from '../settings.js';
import { isDeviceRoute, routeFunctionAccess, type ServiceFunctions, servingOf } from './function-access.js';

/**
 * Throttling of the main and upload APIs' default stage (requests per second, burst). Uploads are heavy and rare. The
 * auth API's is a setting (ServiceSettings.authThrottle), given to its token route as a bucket of its own (it bounds
 * what wrong secrets cost in all) and, apart, to the stage's other routes (the key sets and discovery document).
 */
export const THROTTLE: Readonly<Record<Exclude<ApiName, 'auth'>, ThrottleSettings>> = {
  main: { rateLimit: 100, burstLimit: 200 },
  upload: { rateLimit: 10, burstLimit: 20 },
};

/**
 * Route-level throttling of each device route (main API), above the stage's user-facing default: 100,000 devices
 * reporting their health once a minute make ~1,667 requests/s on PUT /device/health alone. The account's API Gateway
 * limit (10,000/s per region by default) still applies across APIs.
 */
export const DEVICE_ROUTE_THROTTLE: ThrottleSettings = { rateLimit: 2_500, burstLimit: 5_000 };

/** One access-log line per request (HTTP API `$context` variables), JSON. */
const ACCESS_LOG_FORMAT = AccessLogFormat.custom(
  JSON.stringify({
    requestId: '$context.requestId',
    ip: '$context.identity.sourceIp',
    requestTime: '$context.requestTime',
    httpMethod: '$context.httpMethod',
    routeKey: '$context.routeKey',
    status: '$context.status',
    protocol: '$context.protocol',
    responseLength: '$context.responseLength',
    responseLatency: '$context.responseLatency',
    integrationLatency: '$context.integrationLatency',
    integrationStatus: '$context.integrationStatus',
    integrationError: '$context.integrationErrorMessage',
    // Why the JWT authorizer refused a request: the reason of a 401 that lib/monitoring.ts counts as a token failure.
    authorizerError: '$context.authorizer.error',
    userAgent: '$context.identity.userAgent',
  }),
);

/** Construct id and description of each API. */
const APIS: readonly { api: ApiName; id: string; description: string }[] = [
  { api: 'main', id: 'MainApi', description: 'Device scenario service: scenarios, deployments, search, devices ({base_url}).' },
  { api: 'upload', id: 'UploadApi', description: 'Device scenario service: scenario uploads ({scenario_upload_url}).' },
  { api: 'auth', id: 'AuthApi', description: 'Device scenario service: token endpoint and JWKS, backed by Cognito and KMS ({auth_url}).' },
];

/**
 * The origin of an API's default endpoint, `https://<api id>.execute-api.<region>.amazonaws.com`, built from tokens
 * (its stage URL ends with `/`, which an origin may not).
 */
export function apiOrigin(stack: Stack, api: HttpApi): string {
  return `https://${api.apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
}

/**
 * A Lambda integration created in `home`, the nested stack of its API's route functions, rather than under its route
 * (HttpRoute binds an integration into the route's own scope), together with the permission API Gateway invokes the
 * function with (HttpLambdaIntegration puts it in the scope it is bound in). The route references the integration's
 * id through an output of the nested stack.
 */
class NestedLambdaIntegration extends HttpLambdaIntegration {
  constructor(
    id: string,
    handler: IFunction,
    private readonly home: Construct,
  ) {
    super(id, handler);
  }

  override _bindToRoute(options: HttpRouteIntegrationBindOptions): { readonly integrationId: string } {
    return super._bindToRoute({ ...options, scope: this.home });
  }
}

/** An API and its default stage. */
export interface ApiStage {
  api: HttpApi;
  stage: HttpStage;
}

/** What the APIs are built from. */
export interface HttpApisProps {
  settings: ServiceSettings;
  /** Every route served on AWS. */
  routes: readonly RouteDefinition[];
  identity: { issuer: string; jwksUrl: string; clientId: string };
  deviceKeyArn: string;
  functions: ServiceFunctions;
  /** The functions no route runs (FUNCTIONS): the one whose trigger is `httpAuthorizer` guards the user routes. */
  definitions: readonly FunctionDefinition[];
}

/** The three APIs with their routes (see the module comment). */
export class HttpApis {
  readonly main: ApiStage;
  readonly upload: ApiStage;
  readonly auth: ApiStage;
  /** `iss` of device tokens: `{auth_url}/device`. */
  readonly deviceIssuer: string;
  /** `aud` of device tokens: `{base_url}`. */
  readonly deviceAudience: string;
  /** The nested stack of each API's route functions and integrations (none for an API without function routes). */
  readonly routeStacks = new Map<ApiName, NestedStack>();
  private readonly access: Map<string, FunctionAccess>;

  constructor(
    private readonly stack: Stack,
    private readonly props: HttpApisProps,
  ) {
    this.access = routeFunctionAccess(props.routes);
    // The APIs and stages come first: the device issuer is `{auth_url}/device` and device tokens are for
    // `{base_url}`, names the token function and the device authorizer both need.
    // The main API first (APIS's order): the others allow its origin by default (the operator console's page).
    const created: ApiStage[] = [];
    for (const { api, id, description } of APIS) created.push(this.newApi(id, api, description, created[0]));
    const [main, upload, auth] = created as [ApiStage, ApiStage, ApiStage];
    this.main = main;
    this.upload = upload;
    this.auth = auth;
    // Stage URLs end with `/`.
    this.deviceIssuer = `${auth.stage.url}${DEVICE_ISSUER_PATH.slice(1)}`;
    this.deviceAudience = main.stage.url;
    this.addRoutes(main, 'main');
    this.addRoutes(upload, 'upload');
    this.addRoutes(auth, 'auth');
    this.nameAddresses();
  }

  /** Every API with its name in alarms. */
  get all(): readonly [ApiStage, string][] {
    return [
      [this.main, 'Main API'],
      [this.upload, 'Upload API'],
      [this.auth, 'Auth API'],
    ];
  }

  /**
   * Creates an API and its stage. CORS (functions/contract/cors.ts's values): with `corsAllowedOrigins` set, exactly
   * those origins on every API; without, the upload and auth APIs allow the main API's own origin (the operator
   * console, `{base_url}/console`, signs in and uploads across origins) and the main API none (the console calls it
   * from its own origin).
   */
  private newApi(apiId: string, api: ApiName, description: string, main: ApiStage | undefined): ApiStage {
    const { settings } = this.props;
    const origins =
      settings.corsAllowedOrigins.length > 0
        ? settings.corsAllowedOrigins
        : api === 'main' || main === undefined
          ? []
          : [apiOrigin(this.stack, main.api)];
    const httpApi = new HttpApi(this.stack, apiId, {
      description,
      createDefaultStage: false,
      ...(origins.length === 0
        ? {}
        : {
            corsPreflight: {
              allowOrigins: origins,
              allowMethods: CORS_ALLOWED_METHODS.map((method) => CorsHttpMethod[method]),
              allowHeaders: [...CORS_ALLOWED_HEADERS],
              exposeHeaders: [...CORS_EXPOSED_HEADERS],
              maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
            },
          }),
    });
    const accessLogs = new LogGroup(this.stack, `${apiId}AccessLogs`, { retention: settings.logRetention });
    const stage = httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: api === 'auth' ? settings.authThrottle : THROTTLE[api],
      accessLogSettings: { destination: new LogGroupLogDestination(accessLogs), format: ACCESS_LOG_FORMAT },
    });
    // Tokens the JWT authorizer refuses never reach a function: counted from the access log. Only on an API with
    // authorized routes, whose 401s are all refused tokens (the auth API's are wrong passwords).
    if (this.routesOn(api).some((route) => route.scope !== null)) countTokenFailures(accessLogs);
    return { api: httpApi, stage };
  }

  private routesOn(api: ApiName): RouteDefinition[] {
    return this.props.routes.filter((route) => route.api === api);
  }

  /** The nested stack of the route functions of `api` (`<api id>Routes`), created on first use. */
  private routeStackOf(api: ApiName): NestedStack {
    const existing = this.routeStacks.get(api);
    if (existing !== undefined) return existing;
    const { id, description } = APIS.find((candidate) => candidate.api === api) as (typeof APIS)[number];
    const nested = new NestedStack(this.stack, `${id}Routes`, {
      description: `${description} The functions its routes run, their integrations and invoke permissions.`,
    });
    this.routeStacks.set(api, nested);
    return nested;
  }

  /**
   * The route's integration: its function (created on first use, in the nested stack of the route's API) or the
   * pool's key set.
   */
  private integrationOf(route: RouteDefinition): HttpRouteIntegration {
    const serving = servingOf(route);
    if (serving === 'cognito-jwks')
      return new HttpUrlIntegration(`${route.id}Integration`, this.props.identity.jwksUrl, { method: HttpMethod.GET });
    const access = this.access.get(serving.entry) as FunctionAccess;
    const home = this.routeStackOf(route.api);
    const fn = this.props.functions.function({ entry: serving.entry, access, environment: this.environmentOf(access) }, home);
    return new NestedLambdaIntegration(`${route.id}Integration`, fn, home);
  }

  /** The variables only the APIs know: the device issuer and audience, the app client id, the pool's issuer. */
  private environmentOf(access: FunctionAccess): FunctionEnvironment {
    const { identity } = this.props;
    return {
      ...(access.cognitoClient === true ? { [ENV.cognitoClientId]: identity.clientId } : {}),
      ...(access.userTokens === true
        ? { [ENV.jwtIssuer]: identity.issuer, [ENV.jwtAudience]: identity.clientId, [ENV.jwksUrl]: identity.jwksUrl }
        : {}),
      ...(access.deviceKey === undefined
        ? {}
        : {
            [ENV.deviceTokenKeyArn]: this.props.deviceKeyArn,
            [ENV.deviceTokenIssuer]: this.deviceIssuer,
            [ENV.deviceTokenAudience]: this.deviceAudience,
          }),
    };
  }

  /**
   * The bearer authorizer of `api`'s user routes: the Lambda REQUEST authorizer of the `httpAuthorizer` definition
   * naming `api` (its function created on first use, in the main API's nested stack), payload 2.0 with simple
   * responses, identity source the Authorization header (a request without it is 401 without an invocation), answers
   * cached per header for the definition's TTL.
   * @throws Error when no definition names `api`: its user routes would have no authorizer.
   */
  private bearerAuthorizerOf(api: ApiName): HttpLambdaAuthorizer {
    const definition = this.props.definitions.find(
      (candidate): candidate is FunctionDefinition<HttpAuthorizerTrigger> =>
        candidate.trigger.kind === 'httpAuthorizer' && (candidate.trigger.apis as readonly ApiName[]).includes(api),
    );
    if (definition === undefined) throw new Error(`No function's trigger is an httpAuthorizer of the ${api} API, which has user routes.`);
    const fn = this.props.functions.function(
      { entry: definition.entry, access: definition.access, environment: this.environmentOf(definition.access) },
      this.routeStackOf('main'),
    );
    return new HttpLambdaAuthorizer(definition.id, fn, {
      authorizerName: definition.id,
      identitySource: ['$request.header.Authorization'],
      responseTypes: [HttpLambdaResponseType.SIMPLE],
      resultsCacheTtl: Duration.seconds(definition.trigger.resultsCacheTtlSeconds),
    });
  }

  /**
   * Adds the routes of `api`. One authorizer per API and kind of caller (an authorizer belongs to one API). Users and
   * API clients: the bearer authorizer (bearerAuthorizerOf). Devices: the device issuer, whose discovery document API
   * Gateway reads, with the audience device tokens carry and the route's scope; created only on an API with device
   * routes.
   */
  private addRoutes({ api: httpApi, stage }: ApiStage, api: ApiName): void {
    let userAuthorizer: HttpLambdaAuthorizer | undefined;
    let deviceAuthorizer: HttpJwtAuthorizer | undefined;
    for (const route of this.routesOn(api)) {
      let authorization = {};
      if (isDeviceRoute(route)) {
        deviceAuthorizer ??= new HttpJwtAuthorizer('DeviceAccessToken', this.deviceIssuer, { jwtAudience: [this.deviceAudience] });
        // The token must hold the route's scope (its `scope` claim).
        authorization = { authorizer: deviceAuthorizer, authorizationScopes: [route.scope] };
      } else if (route.scope !== null) {
        // The scope and the company in the path are the function's first checks (a cached answer serves every route).
        userAuthorizer ??= this.bearerAuthorizerOf(api);
        authorization = { authorizer: userAuthorizer };
      }
      const [added] = httpApi.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: this.integrationOf(route),
        ...authorization,
      });
      if (route.scope === null && added !== undefined) {
        acknowledge(
          added,
          'AwsSolutions-APIG4',
          `${route.method} ${route.path} is public by contract (docs/contract.md): the token endpoint, the issuers' public keys and ` +
            "discovery document, the OpenAPI document and reference page, or the operator console's page and files, which a caller needs " +
            'before it has a token. Every other route has an authorizer.',
        );
      }
    }
    this.throttleRoutes(stage, api);
  }

  /**
   * Route settings exist only on the CloudFormation stage (the L2 stage throttles its default route only). Device
   * routes get the fleet's throttle; the token route a bucket of its own (`ownThrottle`), so that a flood of token
   * requests never throttles the device issuer's discovery document and key set, which the main API's device
   * authorizer fetches.
   */
  private throttleRoutes(stage: HttpStage, api: ApiName): void {
    const routes = this.routesOn(api);
    const throttled: [string, ThrottleSettings][] = routes.filter(isDeviceRoute).map((route) => [routeKeyOf(route), DEVICE_ROUTE_THROTTLE]);
    for (const route of routes) {
      if (route.onAws?.kind === 'function' && route.onAws.ownThrottle === true)
        throttled.push([routeKeyOf(route), this.props.settings.authThrottle]);
    }
    if (throttled.length === 0) return;
    const routeSettings = Object.fromEntries(
      throttled.map(([routeKey, throttle]) => [
        routeKey,
        { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit },
      ]),
    );
    (stage.node.defaultChild as CfnStage).addPropertyOverride('RouteSettings', routeSettings);
  }

  /**
   * The functions whose access says `apiAddresses` get the three API URLs (the OpenAPI document's `servers`). They only
   * reference the APIs' ids, which depend on nothing, so naming the API a function integrates makes no cycle.
   */
  private nameAddresses(): void {
    for (const [entry, access] of this.access) {
      if (access.apiAddresses !== true) continue;
      const fn = this.props.functions.byEntry.get(entry);
      if (fn === undefined) throw new Error(`lib/constructs/http-apis.ts: no function for ${entry}.`);
      for (const [api, { stage }] of [
        ['main', this.main],
        ['upload', this.upload],
        ['auth', this.auth],
      ] as const)
        fn.addEnvironment(API_ADDRESS_ENV[api], stage.url);
    }
  }
}
