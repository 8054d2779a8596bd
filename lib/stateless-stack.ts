/**
 * Stateless resources of one stage, built from the routes and functions it is given (bin/app.ts: AWS_ROUTES and
 * FUNCTIONS of functions/contract): one ServiceFunction per handler module with the grants of its access
 * (lib/constructs/function-access.ts), the three HTTP APIs (lib/constructs/http-apis.ts; the functions their routes run,
 * with their integrations, in a nested stack per API, so that the routes' resources do not count against this
 * stack's 500), the functions no route runs
 * wired to their triggers (lib/constructs/event-functions.ts: the search indexer fed by the devices and scenarios table
 * streams, the function validating archives PUT through presigned upload slots, the sweepers, the rollout worker, the
 * search index setup and the reindex), the DeploymentChanged event bus, and the alarms (lib/constructs/alarms.ts).
 *
 * Rollouts run on an SQS queue (docs/architecture.md, "Rollouts on AWS"): the functions whose access says
 * `rolloutQueue` send work messages to it, the rollout worker consumes them (its queue trigger: batches of `batchSize`,
 * at most `maxConcurrency` invocations at once), messages that keep failing land in its dead-letter queue, and the
 * rollout sweeper (an EventBridge Scheduler schedule every minute) drives waves and re-sends lost work.
 *
 * On AWS the authentication address is an API in front of the stateful stack's Cognito user pool: `POST /token`
 * runs functions/handlers/auth-cognito-token.ts (same contract as the local token endpoint; the route's `onAws`) and
 * `GET /.well-known/jwks.json` proxies the pool's JWKS. Every route with a scope is behind the API's native JWT
 * authorizer: API Gateway verifies the pool's access token (issuer, the app client id as audience, expiry, signature)
 * and that it holds the route's scope before the function runs, and hands the function the token's claims
 * (`requestContext.authorizer.jwt`, read by functions/platform/auth.ts). A bad token never invokes a function.
 *
 * Devices get their tokens from the same `POST /token` (client credentials): the token function signs them with the
 * stateful stack's KMS key (lib/device-token-key.ts) for the device issuer `{auth_url}/device`, whose discovery
 * document and key set the auth API serves (functions/contract/routes/device-issuer.ts). Device routes (scope
 * DEVICE_SCOPE) have a second JWT authorizer trusting only that issuer; every other route keeps the Cognito one.
 */
import { CfnOutput, Duration, Fn, Stack, type StackProps } from 'aws-cdk-lib';
import { EventBus } from 'aws-cdk-lib/aws-events';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { IDomain } from 'aws-cdk-lib/aws-opensearchservice';
import { Bucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import type { FunctionDefinition } from '../functions/contract/function.js';
import type { RouteDefinition } from '../functions/contract/route.js';
import { createAlarms } from './constructs/alarms.js';
import { createWorkQueue, EventFunctions, type WorkQueue } from './constructs/event-functions.js';
import { type FunctionAccessProps, ServiceFunctions } from './constructs/function-access.js';
import { HttpApis } from './constructs/http-apis.js';
import type { Monitoring } from './monitoring.js';
import type { ServiceFunction } from './service-function.js';

export { ARCHIVE_BUCKET_ENV, TABLE_ENV } from './constructs/function-access.js';
export { DEVICE_ROUTE_THROTTLE, THROTTLE } from './constructs/http-apis.js';

/**
 * ROLLOUT_CHUNK_TIMEOUT_SECONDS on AWS: the sweeper sends a chunk again when it was sent this long ago and is not
 * done (its message was lost, or it reached the dead-letter queue). Longer than the queue's visibility timeout, so a
 * chunk SQS will redeliver by itself is not sent twice.
 */
export const ROLLOUT_CHUNK_TIMEOUT = Duration.minutes(15);

/**
 * Props of the stateless stack: the routes and functions it runs, and what it uses of the stateful stack (the
 * resources its functions are granted on, as FunctionAccessProps describes them, plus the domain for its alarms and
 * the identity for the authorizers).
 */
export interface StatelessStackProps
  extends StackProps,
    Pick<
      FunctionAccessProps,
      'settings' | 'tables' | 'archiveBucket' | 'archiveBucketArnExport' | 'cursorSigningKey' | 'deviceTokens' | 'userPool'
    > {
  /** Every route served on AWS (AWS_ROUTES of functions/contract/routes.ts, or a test's fixtures). */
  routes: readonly RouteDefinition[];
  /** Every function no route runs (FUNCTIONS of functions/contract/functions.ts, or a test's fixtures). */
  functions: readonly FunctionDefinition[];
  /** The search domain's endpoint, ARN export and client roles, and the domain itself for its CloudWatch metrics. */
  search: FunctionAccessProps['search'] & { domain: IDomain };
  identity: {
    /** Token issuer (`iss`): `https://cognito-idp.<region>.amazonaws.com/<pool id>`, the JWT authorizers' issuer. */
    issuer: string;
    /** The issuer's public keys. */
    jwksUrl: string;
    /** The app client id: the access tokens' `client_id` (the JWT authorizers' audience), and the client the token endpoint signs in with. */
    clientId: string;
    /** The pool's pre-token-generation trigger (stateful stack): alarmed here with the other functions, under this name. */
    preTokenGeneration: { fn: IFunction; label: string };
  };
}

/** The stateless half of one stage (see the module comment). */
export class StatelessStack extends Stack {
  readonly apis: HttpApis;
  /** Every function of this stack, keyed by `entry`. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  /** The functions no route runs, with their triggers' dead-letter queues. */
  readonly eventFunctions: EventFunctions;
  /** Rollout work messages (one chunk of a wave's targets each) and their dead-letter queue. */
  readonly workQueue: WorkQueue;
  readonly monitoring: Monitoring;

  constructor(scope: Construct, id: string, props: StatelessStackProps) {
    super(scope, id, props);
    const { settings } = props;
    // Grants on archive objects name the bucket through the explicitly named export, so that their cdk-nag findings
    // (`<export>/<prefix>*`) can be acknowledged one by one.
    const archiveBucket = Bucket.fromBucketAttributes(this, 'ArchiveBucketReference', {
      bucketName: props.archiveBucket.bucketName,
      bucketArn: Fn.importValue(props.archiveBucketArnExport),
    });
    // DeploymentChanged events: customers subscribe with EventBridge rules on this bus.
    const deploymentEvents = new EventBus(this, 'DeploymentEvents');
    new CfnOutput(this, 'DeploymentEventBusName', {
      value: deploymentEvents.eventBusName,
      description: 'EventBridge bus of DeploymentChanged events.',
    });
    // Created before the functions, since every function allowed to send to it gets its URL.
    this.workQueue = createWorkQueue(this, props.functions);
    const factory = new ServiceFunctions(this, {
      ...props,
      archiveBucket,
      deploymentEvents,
      rolloutQueue: this.workQueue.queue,
      rolloutChunkTimeout: ROLLOUT_CHUNK_TIMEOUT,
    });
    this.apis = new HttpApis(this, {
      settings,
      routes: props.routes,
      identity: props.identity,
      deviceKeyArn: props.deviceTokens.keyArn,
      functions: factory,
      definitions: props.functions,
    });
    this.eventFunctions = new EventFunctions(this, {
      settings,
      functions: props.functions,
      tables: props.tables,
      archiveBucket,
      workQueue: this.workQueue,
      eventBus: deploymentEvents,
      factory,
    });
    factory.checkStatefulRoles();
    this.functions = factory.byEntry;
    this.monitoring = createAlarms(this, {
      apis: this.apis.all,
      functions: factory.byEntry,
      otherFunctions: [[props.identity.preTokenGeneration.fn, props.identity.preTokenGeneration.label]],
      eventFunctions: this.eventFunctions.all,
      workQueue: this.workQueue,
      searchDomain: props.search.domain,
      searchVolumeGiB: settings.opensearch.volumeGiB,
    });
    this.addOutputs();
  }

  /** Stack outputs (docs/aws.md, "First company, first user, first token"), under stable names. */
  private addOutputs(): void {
    const { main, upload, auth, deviceIssuer } = this.apis;
    new CfnOutput(this, 'MainApiUrl', { description: '{base_url}', value: main.stage.url });
    new CfnOutput(this, 'UploadApiUrl', { description: '{scenario_upload_url}', value: upload.stage.url });
    new CfnOutput(this, 'AuthApiUrl', { description: '{auth_url}: POST /token, GET /.well-known/jwks.json', value: auth.stage.url });
    new CfnOutput(this, 'DeviceTokenIssuer', {
      description: 'iss of device tokens; its discovery document is {issuer}/.well-known/openid-configuration.',
      value: deviceIssuer,
    });
    new CfnOutput(this, 'AlarmTopicArn', {
      description: 'SNS topic of every alarm of this stage (subscribe to it).',
      value: this.monitoring.topic.topicArn,
    });
    new CfnOutput(this, 'RolloutDeadLetterQueueUrl', {
      description: 'Rollout chunks that failed every receive (docs/operations.md, "On AWS").',
      value: this.workQueue.deadLetterQueue.queueUrl,
    });
    for (const { definition, fn } of this.eventFunctions.all) {
      if (definition.trigger.kind !== 'manual') continue;
      new CfnOutput(this, definition.trigger.output.name, { description: definition.trigger.output.description, value: fn.functionName });
    }
  }
}
