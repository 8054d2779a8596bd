/**
 * Logs, traces and metrics, put on every handler once: the HTTP stack (http.ts `stack()`) and `eventHandler()` for
 * the event-driven functions add the Powertools middlewares, and the few domain metrics are recorded here, from the
 * route and its outcome, by one call from a handler or (token failures) from the local gateway, so that the core never
 * imports Powertools.
 *
 * Logger, Tracer and Metrics are module singletons, created once per cold start. In AWS: JSON log lines in the
 * function's log group, X-Ray segments for the handler and every AWS SDK call, metrics as CloudWatch Embedded Metric
 * Format (EMF) documents in the same log stream. Locally (LOG_FORMAT=text, set by the local runtime): readable log
 * lines, no tracing, metrics as DEBUG log lines.
 */

import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { Tracer } from '@aws-lambda-powertools/tracer';
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ENV } from '../contract/environment.js';
import { DomainError, UnauthorizedError } from '../core/shared/errors.js';
import type { Principal } from '../core/shared/principal.js';
import { tokenFailureReason } from './auth.js';
import { logger, REQUEST_COMPLETED, readableLogs, SERVICE_NAME } from './logger.js';
import { problemOf } from './problem.js';

/** Namespace of every metric when POWERTOOLS_METRICS_NAMESPACE is unset (the CDK sets it to the same name). */
export const DEFAULT_METRICS_NAMESPACE = 'DeviceScenarioService';

/** Metric names: what a dashboard or an alarm selects. */
export const METRIC = {
  /** Count of deployment result items, dimensions `action` (DEPLOY, UNDEPLOY) and `cause` (a failure cause, or SUCCESS). */
  deploymentResults: 'DeploymentResults',
  /** Count of archives stored, dimension `channel` (`direct`: the multipart upload; `presigned`: through an upload slot). */
  uploadsAccepted: 'UploadsAccepted',
  /** Count of archives refused, dimensions `channel` and `reason` (UploadRejectionReason). */
  uploadsRejected: 'UploadsRejected',
  /** Milliseconds from the stack's first middleware to the answer of a successful search (the Search route). */
  searchLatency: 'SearchLatency',
  /**
   * Count of bearer tokens refused (401) before any handler ran. Locally the gateway counts them (recordTokenFailure),
   * dimension `reason`: missing, malformed, expired, invalid. On AWS API Gateway's JWT authorizer refuses them, so a
   * metric filter on the APIs' access logs counts them, without dimension (lib/monitoring.ts).
   */
  tokenFailures: 'TokenFailures',
  /**
   * Count of the AWS bearer authorizer's failures (functions/handlers/bearer-authorizer.ts): invocations that could
   * not decide, because an issuer's keys could not be read or of a bug (API Gateway answers 500), dimension `service`
   * only. Its errors alarm counts these instead of its Lambda errors, which also count every token it refuses by
   * throwing `Unauthorized` (lib/constructs/alarms.ts); the access logs count those refusals as TokenFailures.
   */
  authorizerFailures: 'AuthorizerFailures',
  /**
   * Count of DynamoDB item writes made by device health reports, dimension `kind`: `presence` (one per report, ~100
   * bytes) or `device` (the device item, only when its health changed or it became CONNECTED; each one is also a
   * stream record and a search index update). Their ratio is what an unchanged report saves.
   */
  deviceWrites: 'DeviceWrites',
} as const;

/**
 * The tracer and its middleware, loaded (once, on first use) only when tracing is on: POWERTOOLS_TRACE_ENABLED=false
 * or 0 (the local runtime, the tests) leaves the X-Ray SDK unloaded, because importing it installs async hooks that
 * track every promise of the process (measured locally: ~1 ms of CPU per search request). Loaded by a dynamic import
 * rather than a top-level await, so that this module can still be loaded as CommonJS.
 */
let tracing:
  | Promise<
      { tracer: Tracer; captureLambdaHandler: typeof import('@aws-lambda-powertools/tracer/middleware').captureLambdaHandler } | undefined
    >
  | undefined;
function loadTracing() {
  tracing ??= ['false', '0'].includes((process.env[ENV.powertoolsTraceEnabled] ?? '').toLowerCase())
    ? Promise.resolve(undefined)
    : Promise.all([import('@aws-lambda-powertools/tracer'), import('@aws-lambda-powertools/tracer/middleware')]).then(
        ([{ Tracer }, { captureLambdaHandler }]) => ({ tracer: new Tracer({ serviceName: SERVICE_NAME }), captureLambdaHandler }),
      );
  return tracing;
}

/** The tracer of the handler and of every AWS SDK call (`traced`); undefined when tracing is off. */
export async function loadedTracer(): Promise<Tracer | undefined> {
  return (await loadTracing())?.tracer;
}

/**
 * Powertools Metrics that print, with LOG_FORMAT=text (the local runtime), one readable DEBUG log line per metric
 * instead of an EMF document, and stay silent when a request recorded no metric (Powertools warns on every such
 * flush, i.e. on nearly every request).
 */
class ServiceMetrics extends Metrics {
  override publishStoredMetrics(): this {
    if (!this.hasStoredMetrics()) return this;
    if (!readableLogs()) return super.publishStoredMetrics();
    const emf = this.serializeMetrics() as unknown as Record<string, unknown> & {
      _aws: { CloudWatchMetrics: { Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
    };
    const [directive] = emf._aws.CloudWatchMetrics;
    const dimensions = Object.fromEntries(
      [...new Set(directive?.Dimensions.flat() ?? [])].filter((name) => name !== 'service').map((name) => [name, emf[name]]),
    );
    for (const { Name, Unit } of directive?.Metrics ?? []) logger.debug(`metric ${Name}=${String(emf[Name])} ${Unit}`, dimensions);
    this.clearMetrics();
    this.clearDimensions();
    this.clearMetadata();
    return this;
  }
}

const metricsOptions = { namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? DEFAULT_METRICS_NAMESPACE, serviceName: SERVICE_NAME };
/** Request-scoped metrics without dimensions (search latency), flushed by logMetrics after each invocation. */
export const metrics: Metrics = new ServiceMetrics(metricsOptions);
/**
 * Counts with dimensions, published at once, one EMF document each: a document's values apply to all of its
 * dimensions, so the counts of one invocation that differ by a dimension (deployment results by action and cause, the
 * archives of one S3 event) each need their own.
 */
const immediateMetrics: Metrics = new ServiceMetrics({ ...metricsOptions, singleMetric: true });

/**
 * Wraps an AWS SDK v3 client: each of its calls becomes a subsegment of the trace (a no-op when tracing is off). The
 * tracer is attached as soon as it is loaded (microtasks after the first use, before any invocation runs).
 */
export function traced<Client>(client: Client): Client {
  void loadTracing().then((loaded) => loaded?.tracer.captureAWSv3Client(client));
  return client;
}

/** captureLambdaHandler of the loaded tracer, or nothing when tracing is off. */
function traceMiddleware<TEvent, TResult>(): middy.MiddlewareObj<TEvent, TResult> {
  let inner: Promise<middy.MiddlewareObj<TEvent, TResult> | undefined> | undefined;
  const get = () =>
    (inner ??= loadTracing().then((loaded) =>
      loaded === undefined
        ? undefined
        : (loaded.captureLambdaHandler(loaded.tracer, { captureResponse: false }) as middy.MiddlewareObj<TEvent, TResult>),
    ));
  return {
    before: async (request) => (await get())?.before?.(request),
    after: async (request) => (await get())?.after?.(request),
    onError: async (request) => (await get())?.onError?.(request),
  };
}

/**
 * The Powertools middlewares of every handler, outermost first: the trace (responses are not captured: they can be
 * megabytes of tenant data), the Lambda context on every log line (temporary keys cleared after each invocation),
 * and the metrics flush (after every middleware inside has recorded its metrics).
 */
export function powertoolsMiddlewares<TEvent, TResult>(): middy.MiddlewareObj<TEvent, TResult>[] {
  return [
    traceMiddleware<TEvent, TResult>(),
    injectLambdaContext(logger, { clearState: true }) as middy.MiddlewareObj<TEvent, TResult>,
    logMetrics(metrics) as middy.MiddlewareObj<TEvent, TResult>,
  ];
}

/**
 * A middy handler for the event-driven functions (stream consumers, S3 notifications, schedules, custom resources),
 * observed like the HTTP ones: use it where `middy<TEvent, TResult>({ timeoutEarlyInMillis: 0 })` would be.
 */
export function eventHandler<TEvent, TResult>(): middy.MiddyfiedHandler<TEvent, TResult, Error, Context> {
  let chain = middy<TEvent, TResult>({ timeoutEarlyInMillis: 0 });
  for (const middleware of powertoolsMiddlewares<TEvent, TResult>()) chain = chain.use(middleware);
  return chain;
}

/** Why an upload was refused: the `reason` dimension of UploadsRejected. */
export type UploadRejectionReason = 'version-exists' | 'quota-exceeded' | 'too-large' | 'invalid-archive' | 'expired' | 'interrupted';

/**
 * The rejection reason of an upload's problem body (409, 413, 422, or 410 for a presigned upload that never
 * completed), or undefined for any other answer (a 400 or 403 is a bad request, not a refused archive).
 */
export function uploadRejectionReason(problem: {
  status?: unknown;
  reason?: unknown;
  quotaBytes?: unknown;
}): UploadRejectionReason | undefined {
  switch (problem.status) {
    case 409:
      return 'version-exists';
    case 413:
      return problem.quotaBytes === undefined ? 'too-large' : 'quota-exceeded';
    case 422:
      return 'invalid-archive';
    case 410:
      return problem.reason === 'expired' || problem.reason === 'interrupted' ? problem.reason : undefined;
    default:
      return undefined;
  }
}

/** Publishes `name` = `value` (a count) with `dimensions` at once, as its own EMF document. */
function count(name: string, dimensions: Record<string, string>, value = 1): void {
  for (const [dimension, dimensionValue] of Object.entries(dimensions)) immediateMetrics.addDimension(dimension, dimensionValue);
  immediateMetrics.addMetric(name, MetricUnit.Count, value);
}

function recordUpload(channel: 'direct' | 'presigned', outcome: 'accepted' | UploadRejectionReason): void {
  if (outcome === 'accepted') count(METRIC.uploadsAccepted, { channel });
  else count(METRIC.uploadsRejected, { channel, reason: outcome });
}

/**
 * Counts a token the local gateway refused with `error` (TokenFailures, published at once): an UnauthorizedError (401)
 * with the reason verifyBearerToken gave it, `invalid` when it gave none (a verified token without a `companies`
 * claim). Any other error (a 403 for a missing scope, a 503 when the issuer cannot be reached) counts nothing: the
 * token itself was not refused. The handlers never count token failures, so that on AWS, where API Gateway refuses the
 * tokens and its access logs count them, no refusal is counted twice.
 */
export function recordTokenFailure(error: unknown): void {
  if (error instanceof UnauthorizedError) count(METRIC.tokenFailures, { reason: tokenFailureReason(error) ?? 'invalid' });
}

/** Counts a failure of the AWS bearer authorizer (AuthorizerFailures, published at once). */
export function recordAuthorizerFailure(): void {
  count(METRIC.authorizerFailures, {});
}

/** Metrics of a route's answer: direct uploads accepted or refused, search latency. */
function recordRouteMetrics(route: string, status: number, latencyMs: number, error: unknown): void {
  if (route === 'ScenarioUpload') {
    const rejection = error instanceof DomainError ? uploadRejectionReason(problemOf(error)) : undefined;
    if (status === 201) recordUpload('direct', 'accepted');
    else if (rejection !== undefined) recordUpload('direct', rejection);
  } else if (route === 'Search' && status === 200) {
    metrics.addMetric(METRIC.searchLatency, MetricUnit.Milliseconds, latencyMs);
  }
}

function companyOf(event: APIGatewayProxyEventV2): string | undefined {
  const raw = event.pathParameters?.companyId;
  if (raw === undefined || raw === '') return undefined;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * middy middleware of the HTTP stack, registered inside powertoolsMiddlewares and outside the problem+json one (so
 * that its `after`/`onError` see the final status): puts the request's correlation fields on every log line —
 * `requestId` (API Gateway's), `route` (the route's id), `company` (the `companyId`
 * path parameter), `caller` (the token's subject, from the moment bearerAuthentication sets `context.principal`) —
 * then logs one `request completed` line with `method`, `path`, `status` and `latencyMs`, and records the route's
 * metrics (recordRouteMetrics).
 */
export function requestObservability(routeId: string): middy.MiddlewareObj<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> {
  const startedAt = new WeakMap<object, number>();
  const complete = (request: middy.Request<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2>) => {
    const latencyMs = Math.round(performance.now() - (startedAt.get(request) ?? performance.now()));
    const status = request.response?.statusCode ?? 500;
    const route = routeId;
    recordRouteMetrics(route, status, latencyMs, request.error);
    const { http } = request.event.requestContext;
    logger.info(REQUEST_COMPLETED, { method: http.method, path: request.event.rawPath, status, latencyMs });
  };
  return {
    before: (request) => {
      startedAt.set(request, performance.now());
      const { event, context } = request;
      const company = companyOf(event);
      logger.appendKeys({
        requestId: event.requestContext.requestId,
        route: routeId,
        ...(company === undefined ? {} : { company }),
      });
      // The caller is known only once bearerAuthentication (registered after this middleware) has run: the property
      // appends it to the log keys the moment it is set, so that every later line carries it.
      let principal: Principal | undefined;
      Object.defineProperty(context, 'principal', {
        configurable: true,
        enumerable: true,
        get: () => principal,
        set: (value: Principal) => {
          principal = value;
          logger.appendKeys({ caller: value.subject });
        },
      });
    },
    after: complete,
    onError: complete,
  };
}

/**
 * Counts the result items of an executed deployment request by `action` and `cause` (SUCCESS for a successful item),
 * one EMF document per combination present. A dry run changed nothing and counts nothing.
 */
export function recordDeploymentResults(result: { items: readonly { action: string; cause: string | null }[]; dryRun: boolean }): void {
  if (result.dryRun) return;
  const counts = new Map<string, { action: string; cause: string; count: number }>();
  for (const { action, cause } of result.items) {
    const key = `${action} ${cause ?? 'SUCCESS'}`;
    const entry = counts.get(key) ?? { action, cause: cause ?? 'SUCCESS', count: 0 };
    entry.count += 1;
    counts.set(key, entry);
  }
  for (const entry of counts.values()) count(METRIC.deploymentResults, { action: entry.action, cause: entry.cause }, entry.count);
}

/** The part of the upload slot repository whose writes carry a presigned upload's rejection. */
interface RejectingUploads {
  complete(
    company: string,
    uploadId: string,
    claimedAt: string,
    outcome: { status: string; problem?: Record<string, unknown> },
  ): Promise<boolean>;
  reject(company: string, uploadId: string, expected: never, problem: Record<string, unknown>): Promise<boolean>;
}

/**
 * Runs `process` (processUploadedArchive of one S3 object) and counts its outcome: UploadsAccepted when it answers
 * STORED, UploadsRejected with the reason of the problem the slot was rejected with when it answers REJECTED.
 * `process` gets `dependencies` with `uploads` observed (its rejecting writes are read, not changed).
 */
export async function measuredPresignedUpload<Dependencies extends { uploads: object }, Outcome extends string>(
  dependencies: Dependencies,
  process: (observed: Dependencies) => Promise<Outcome>,
): Promise<Outcome> {
  let problem: Record<string, unknown> | undefined;
  const uploads = dependencies.uploads as unknown as RejectingUploads;
  const observed: RejectingUploads = Object.create(uploads);
  observed.complete = async (company, uploadId, claimedAt, outcome) => {
    const applied = await uploads.complete(company, uploadId, claimedAt, outcome);
    if (applied && outcome.status === 'REJECTED') problem = outcome.problem;
    return applied;
  };
  observed.reject = async (company, uploadId, expected, rejection) => {
    const applied = await uploads.reject(company, uploadId, expected, rejection);
    if (applied) problem = rejection;
    return applied;
  };
  const outcome = await process({ ...dependencies, uploads: observed });
  const reason = problem === undefined ? undefined : uploadRejectionReason(problem);
  if (outcome === 'STORED') recordUpload('presigned', 'accepted');
  else if (outcome === 'REJECTED' && reason !== undefined) recordUpload('presigned', reason);
  return outcome;
}

/**
 * Counts the writes of one recorded health report (DeviceWrites): its presence entry, and the device item when
 * reportDeviceHealth wrote it.
 */
export function recordHealthReportWrites(outcome: { deviceWrite?: string }): void {
  count(METRIC.deviceWrites, { kind: 'presence' });
  if (outcome.deviceWrite !== undefined) count(METRIC.deviceWrites, { kind: 'device' });
}
