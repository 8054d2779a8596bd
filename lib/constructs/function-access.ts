/**
 * The functions of the stateless stack and what each may touch: one ServiceFunction per handler module, its grants
 * and variables read from its `access` (a route's or a function definition's, functions/contract/route.ts), nothing
 * else. A grant a function needs but cannot get fails the synth with the reason: a route without access, a search or
 * device key user without the role the stateful stack's resource policy names, an archive key pattern nobody
 * explained. A function is a child of the scope its caller gives (the stack itself for the functions no route runs,
 * the nested stack of its API for a route's: lib/constructs/http-apis.ts), not of a construct of its own, so that its
 * logical id stays what it was before the stack was split into these parts.
 */
import { type CfnElement, Duration, Fn, type Stack } from 'aws-cdk-lib';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import type { EventBus } from 'aws-cdk-lib/aws-events';
import { type IRole, PolicyStatement, Role } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { replicasFor } from '../../functions/adapters/aws/opensearch-queries.js';
import { TABLES } from '../../functions/adapters/aws/tables.js';
import { STORED_ARCHIVES, UPLOADED_ARCHIVES } from '../../functions/contract/archives.js';
import { ENV } from '../../functions/contract/environment.js';
import type { FunctionDefinition } from '../../functions/contract/function.js';
import type { FunctionAccess, RouteDefinition, SearchAccess, TableName } from '../../functions/contract/route.js';
import { TABLE_ENV } from '../../functions/contract/tables.js';
import { DEVICE_SCOPE } from '../../functions/core/shared/principal.js';
import { DEVICE_KEY_ACTIONS } from '../device-token-key.js';
import { acknowledge, wildcardResourceFinding } from '../nag.js';
import { SEARCH_ACTIONS, SEARCH_INDEX_ALIAS, searchResources } from '../search-domain.js';
import { type FunctionEnvironment, functionIdOf, ServiceFunction } from '../service-function.js';
import type { ServiceSettings } from '../settings.js';

/** The variable each table's name is read from (functions/contract/tables.ts). */
export { TABLE_ENV };

/** The variable the archive bucket's name is read from. */
export const ARCHIVE_BUCKET_ENV = ENV.archiveBucket;

/** Why each archive key pattern is granted (cdk-nag acknowledgment of its wildcard). */
const OBJECT_PATTERN_REASONS: Readonly<Record<string, string>> = {
  [UPLOADED_ARCHIVES]:
    `Presigned uploads land under ${UPLOADED_ARCHIVES}: the slot function may only PUT there (the URL it signs), the ` +
    'validation function reads and then deletes each upload; nothing else of the bucket.',
  [STORED_ARCHIVES]:
    `Stored archives live under ${STORED_ARCHIVES} with a new key per upload; the upload functions write there and delete ` +
    'only the archive they just wrote when its version record is refused. The bucket is versioned and no role may delete ' +
    'versions, so a deleted archive stays recoverable for 30 days.',
};

/** Device routes (scope DEVICE_SCOPE): behind the device issuer's authorizer, and route-level throttling. */
export function isDeviceRoute(route: RouteDefinition): boolean {
  return route.scope === DEVICE_SCOPE;
}

/**
 * How a route is served on AWS: a function (handler module and access) or the Cognito pool's key set.
 * @throws Error for a route without access, or an `auth` route without `onAws`.
 */
export function servingOf(route: RouteDefinition): { entry: string; access: FunctionAccess } | 'cognito-jwks' {
  if (route.api === 'auth') {
    if (route.onAws === undefined) throw new Error(`Auth route '${route.id}' does not say how it is served on AWS (onAws).`);
    if (route.onAws.kind === 'cognito-jwks') return 'cognito-jwks';
    if (route.onAws.kind === 'function') return { entry: route.onAws.entry, access: route.onAws.access };
  }
  if (route.access === undefined) throw new Error(`Route ${route.id} declares no access; say what its function may touch.`);
  return { entry: route.entry, access: route.access };
}

/**
 * What each route function may touch on AWS, by handler module: its routes' access, plus the device settings when one
 * of them is a device route or touches the presence table.
 * @throws Error when routes served by one module declare different access (one function has one role).
 */
export function routeFunctionAccess(routes: readonly RouteDefinition[]): Map<string, FunctionAccess> {
  const declared = new Map<string, FunctionAccess>();
  const deviceSettings = new Set<string>();
  for (const route of routes) {
    const serving = servingOf(route);
    if (serving === 'cognito-jwks') continue;
    const previous = declared.get(serving.entry);
    if (previous !== undefined && JSON.stringify(previous) !== JSON.stringify(serving.access)) {
      throw new Error(`Routes served by '${serving.entry}' declare different access; one function has one role.`);
    }
    declared.set(serving.entry, serving.access);
    if (isDeviceRoute(route) || serving.access.tables?.presence !== undefined) deviceSettings.add(serving.entry);
  }
  return new Map([...declared].map(([entry, access]) => [entry, deviceSettings.has(entry) ? { ...access, deviceSettings: true } : access]));
}

/**
 * What every function of a stage may touch on AWS, by handler module: the route functions' (routeFunctionAccess) and
 * the functions' no route runs. The stateful stack names the roles of the search clients and device key users from it.
 * @throws Error when a module is both, or as routeFunctionAccess.
 */
export function awsFunctionAccess(
  routes: readonly RouteDefinition[],
  functions: readonly FunctionDefinition[],
): Map<string, FunctionAccess> {
  const access = routeFunctionAccess(routes);
  for (const definition of functions) {
    if (access.has(definition.entry)) throw new Error(`'${definition.entry}' is both a route's and a function definition's handler.`);
    access.set(definition.entry, definition.access);
  }
  return access;
}

/** What the functions are granted on: the stateful stack's resources and the stateless stack's own. */
export interface FunctionAccessProps {
  /** Customer parameters (lib/settings.ts). */
  settings: ServiceSettings;
  /** The tables of StatefulStack, by logical name. */
  tables: Readonly<Record<TableName, ITable>>;
  /** The archive bucket, named through the explicitly named export of its ARN (so findings can be acknowledged). */
  archiveBucket: IBucket;
  /** Name of the stateful stack's export of the archive bucket's ARN. */
  archiveBucketArnExport: string;
  search: {
    /** Domain endpoint host name. */
    domainEndpoint: string;
    /** Name of the stateful stack's export of the domain ARN (StatefulStack.searchDomainArnExport). */
    domainArnExport: string;
    /** The role of each search client, by handler module (named in the domain's access policy). */
    clientRoles: ReadonlyMap<string, IRole>;
  };
  /** The device token key (StatefulStack.deviceTokenKey). */
  deviceTokens: {
    /** ARN of the KMS key; functions get only this, never key material. */
    keyArn: string;
    /** The role of each device key user, by handler module (named in the key's policy). */
    roles: ReadonlyMap<string, IRole>;
  };
  /** The key listing cursors are signed with (StatefulStack.cursorSigningKey). */
  cursorSigningKey: ISecret;
  /** The Cognito user pool (StatefulStack.identity): `userPool` access is granted on it, and only on it. */
  userPool: {
    /** COGNITO_USER_POOL_ID of the functions granted actions on it. */
    userPoolId: string;
    /** The resource of their `cognito-idp:<action>` grants. */
    userPoolArn: string;
  };
  deploymentEvents: EventBus;
  /** The rollout queue: `rolloutQueue` access sends to it; its senders and consumer read its settings. */
  rolloutQueue: IQueue;
  /** ROLLOUT_CHUNK_TIMEOUT_SECONDS of the rollout queue's senders and consumer. */
  rolloutChunkTimeout: Duration;
}

/** One function to create: its handler module, access and the variables only its caller knows. */
export interface FunctionSpec {
  entry: string;
  access: FunctionAccess;
  /** Variables beyond those the access implies. */
  environment?: FunctionEnvironment;
  /** Consumes the rollout queue: reads its settings (the composition root builds the rollout services) without sending. */
  rolloutConsumer?: boolean;
}

/**
 * Creates the functions of a stack (see the module comment) and keeps them by handler module: a module is one
 * function with one role, however many routes or triggers run it.
 */
export class ServiceFunctions {
  /** Every function created, by handler module, in creation order. */
  readonly byEntry = new Map<string, ServiceFunction>();
  private readonly accessOf = new Map<string, FunctionAccess>();
  private readonly domainArn: string;

  constructor(
    private readonly stack: Stack,
    private readonly props: FunctionAccessProps,
  ) {
    this.domainArn = Fn.importValue(props.search.domainArnExport);
  }

  /**
   * The function of `spec.entry`, created with its grants on first use, under `scope` (the stack or one of its nested
   * stacks; its role, policy and log group beside it). A later call for the same entry returns the first function,
   * wherever it lives.
   */
  function(spec: FunctionSpec, scope: Construct = this.stack): ServiceFunction {
    const existing = this.byEntry.get(spec.entry);
    if (existing !== undefined) return existing;
    const { entry, access } = spec;
    const role = this.statefulRole(entry, access, scope);
    const fn = new ServiceFunction(scope, functionIdOf(entry), {
      entry,
      description: entry,
      logLevel: this.props.settings.logLevel,
      logRetention: this.props.settings.logRetention,
      ...(access.timeoutSeconds === undefined ? {} : { timeout: Duration.seconds(access.timeoutSeconds) }),
      ...(access.memorySize === undefined ? {} : { memorySize: access.memorySize }),
      ...(access.packageFiles === undefined ? {} : { packageFiles: access.packageFiles }),
      ...(access.consoleAssets === true ? { consoleAssets: true } : {}),
      ...(role === undefined ? {} : { role }),
      environment: { ...spec.environment, ...this.environmentOf(spec) },
    });
    this.grantQueueAndSearch(fn, access, role);
    this.grantKeyEventsAndSettings(fn, access);
    this.grantUserPool(fn, access);
    this.grantTables(fn, access);
    this.grantArchives(fn, access);
    this.byEntry.set(entry, fn);
    this.accessOf.set(entry, access);
    return fn;
  }

  /**
   * Checks that every role the stateful stack's resource policies name belongs to a function of this stack whose
   * access says so: both stacks must be built from the same routes and functions.
   * @throws Error naming a role without its function.
   */
  checkStatefulRoles(): void {
    const users: [ReadonlyMap<string, IRole>, (access: FunctionAccess) => boolean, string][] = [
      [this.props.search.clientRoles, (access) => access.search !== undefined, 'search domain'],
      [this.props.deviceTokens.roles, (access) => access.deviceKey !== undefined, 'device token key'],
    ];
    for (const [roles, uses, resource] of users) {
      for (const entry of roles.keys()) {
        if (!this.byEntry.has(entry) || !uses(this.accessOf.get(entry) as FunctionAccess))
          throw new Error(`The ${resource} names a role for '${entry}', but no function of the stateless stack with that access runs it.`);
      }
    }
  }

  /**
   * The role a resource policy of the stateful stack names for a search client or device key user, imported
   * mutable (the function's other permissions become a policy of this stack attached to it); undefined for others.
   * @throws Error when the stateful stack has no role for it: the domain or the key would refuse the function.
   */
  private statefulRole(entry: string, access: FunctionAccess, scope: Construct): IRole | undefined {
    if (access.search === undefined && access.deviceKey === undefined) return undefined;
    const statefulRole = access.search !== undefined ? this.props.search.clientRoles.get(entry) : this.props.deviceTokens.roles.get(entry);
    if (statefulRole === undefined) {
      throw new Error(
        `No role of the stateful stack for '${entry}', whose access names ${access.search !== undefined ? `search '${access.search}'` : `device key '${access.deviceKey}'`}: ` +
          'the resource policy would refuse it; build both stacks from the same routes and functions.',
      );
    }
    // Imported beside the function, so that the policy attached to it lives in the function's (nested) stack. The
    // policy is an inline policy of the stateful role named after its logical id: in a nested stack under another
    // construct id than the stack's own used, so that on a stage deployed before the route functions moved there, the
    // stack's cleanup of the old policy does not delete the new one of the same name from the same role.
    const id = scope === this.stack ? `${functionIdOf(entry)}Role` : `${functionIdOf(entry)}StatefulRole`;
    return Role.fromRoleArn(scope, id, statefulRole.roleArn, { mutable: true });
  }

  /** The variables the access implies: search, cursors, rollout settings. */
  private environmentOf({ access, rolloutConsumer }: FunctionSpec): FunctionEnvironment {
    const { settings } = this.props;
    return {
      ...(access.search === undefined ? {} : searchEnvironment(this.props.search.domainEndpoint)),
      // Index administration creates indexes: their replicas follow the data node count (0 on one node).
      ...(access.search === 'admin' ? { [ENV.openSearchReplicas]: String(replicasOf(settings)) } : {}),
      // A CloudFormation dynamic reference, resolved at deployment: no Secrets Manager call at cold start, but the
      // value is visible to whoever may read the functions' configuration (lambda:GetFunctionConfiguration).
      ...(access.pagesListings === true ? { [ENV.cursorSigningKey]: this.props.cursorSigningKey.secretValue.unsafeUnwrap() } : {}),
      // The URL is a name, not a permission: only `rolloutQueue` grants sqs:SendMessage.
      ...(access.rolloutQueue === true || rolloutConsumer === true
        ? {
            [ENV.rolloutQueueUrl]: this.props.rolloutQueue.queueUrl,
            [ENV.rolloutChunkTimeoutSeconds]: String(this.props.rolloutChunkTimeout.toSeconds()),
          }
        : {}),
    };
  }

  /** sqs:SendMessage on the rollout queue; the search paths of the access level, on the role too. */
  private grantQueueAndSearch(fn: ServiceFunction, access: FunctionAccess, role: IRole | undefined): void {
    if (access.rolloutQueue === true) {
      // SendMessage covers SendMessageBatch; with SQS-managed encryption no KMS permission is needed.
      fn.addToRolePolicy(new PolicyStatement({ actions: ['sqs:SendMessage'], resources: [this.props.rolloutQueue.queueArn] }));
    }
    if (access.search === undefined || role === undefined) return;
    // The domain's access policy already allows exactly this; the same grant on the role keeps the function's
    // permissions readable in one place and survives permission boundaries, which limit resource-policy grants.
    const level: SearchAccess = access.search;
    fn.addToRolePolicy(new PolicyStatement({ actions: [...SEARCH_ACTIONS[level]], resources: searchResources(level, this.domainArn) }));
    if (level === 'admin') {
      acknowledge(
        role,
        wildcardResourceFinding(`${this.props.search.domainArnExport}/*`),
        'Index administration (template, concrete indexes <alias>-<time>, the atomic _aliases switch, deleting old indexes) ' +
          'spans several OpenSearch paths of this one domain; only the setup custom resource and the manual reindex have it.',
      );
    }
  }

  /** The device key action, the device settings, the event bus. */
  private grantKeyEventsAndSettings(fn: ServiceFunction, access: FunctionAccess): void {
    if (access.deviceKey !== undefined) {
      // The key policy already allows exactly this; the same grant on the role keeps the permissions readable here.
      fn.addToRolePolicy(
        new PolicyStatement({ actions: [DEVICE_KEY_ACTIONS[access.deviceKey]], resources: [this.props.deviceTokens.keyArn] }),
      );
    }
    if (access.deviceSettings === true) {
      fn.addEnvironment(ENV.deviceHeartbeatSeconds, String(this.props.settings.devices.heartbeatSeconds));
      fn.addEnvironment(ENV.deviceTokenLifetimeSeconds, String(this.props.settings.devices.tokenLifetimeSeconds));
    }
    // Unset (https and public addresses only) unless the stage names hosts.
    if (access.webhookSettings === true && this.props.settings.webhookAllowedHttpHosts !== '') {
      fn.addEnvironment(ENV.webhookAllowedHttpHosts, this.props.settings.webhookAllowedHttpHosts);
    }
    if (access.events === true) {
      this.props.deploymentEvents.grantPutEventsTo(fn);
      fn.addEnvironment(ENV.eventBusName, this.props.deploymentEvents.eventBusName);
    }
  }

  /**
   * Exactly the Cognito administration actions the access lists, on the service's pool only, and the pool's id
   * (COGNITO_USER_POOL_ID); nothing for a function that lists none.
   */
  private grantUserPool(fn: ServiceFunction, access: FunctionAccess): void {
    const actions = access.userPool ?? [];
    if (actions.length === 0) return;
    fn.addToRolePolicy(
      new PolicyStatement({
        actions: [...new Set(actions)].map((action) => `cognito-idp:${action}`),
        resources: [this.props.userPool.userPoolArn],
      }),
    );
    fn.addEnvironment(ENV.cognitoUserPoolId, this.props.userPool.userPoolId);
  }

  /** Table grants (reads also on the table's indexes); with `storage`, the names of the other tables. */
  private grantTables(fn: ServiceFunction, access: FunctionAccess): void {
    for (const [name, table] of Object.entries(this.props.tables) as [TableName, ITable][]) {
      const tableAccess = access.tables?.[name];
      const indexes = (TABLES[name] as { globalSecondaryIndexes?: readonly { indexName: string }[] }).globalSecondaryIndexes ?? [];
      if (tableAccess !== undefined)
        fn.bindTable(
          table,
          tableAccess,
          TABLE_ENV[name],
          indexes.map((index) => index.indexName),
        );
      else if (access.storage) fn.addEnvironment(TABLE_ENV[name], table.tableName);
    }
  }

  /**
   * Archive object grants by key pattern, each wildcard acknowledged with its reason; with `storage`, the bucket's name.
   * @throws Error for a key pattern without a reason in OBJECT_PATTERN_REASONS.
   */
  private grantArchives(fn: ServiceFunction, access: FunctionAccess): void {
    const { archiveBucket, archiveBucketArnExport } = this.props;
    const objectsFinding = (pattern: string) => wildcardResourceFinding(`${archiveBucketArnExport}/${pattern}`);
    if (access.bucket !== undefined) {
      fn.bindBucket(archiveBucket, access.bucket, ARCHIVE_BUCKET_ENV);
      for (const pattern of Object.keys(access.bucket)) {
        const reason = OBJECT_PATTERN_REASONS[pattern];
        if (reason === undefined) throw new Error(`lib/constructs/function-access.ts: no OBJECT_PATTERN_REASONS entry for '${pattern}'.`);
        acknowledge(fn.role as IRole, objectsFinding(pattern), reason);
      }
    } else if (access.storage) {
      fn.addEnvironment(ARCHIVE_BUCKET_ENV, archiveBucket.bucketName);
    }
    if (access.bucketGetObjectKeyPattern !== undefined) {
      fn.addToRolePolicy(
        new PolicyStatement({ actions: ['s3:GetObject'], resources: [archiveBucket.arnForObjects(access.bucketGetObjectKeyPattern)] }),
      );
      acknowledge(
        fn.role as IRole,
        objectsFinding(access.bucketGetObjectKeyPattern),
        `Presigned downloads of stored archives: s3:GetObject only, on the objects under ${access.bucketGetObjectKeyPattern} (one object per scenario version).`,
      );
    }
  }
}

/** The variables of a search client: the domain, its alias, SigV4. */
function searchEnvironment(domainEndpoint: string): FunctionEnvironment {
  return {
    [ENV.searchEngine]: 'opensearch',
    [ENV.openSearchUrl]: `https://${domainEndpoint}`,
    [ENV.openSearchIndex]: SEARCH_INDEX_ALIAS,
    [ENV.openSearchAuth]: 'aws-sigv4',
  };
}

/** Replicas of new indexes for the domain's data node count (functions/adapters/aws/opensearch-queries.ts). */
function replicasOf(settings: ServiceSettings): number {
  return replicasFor(settings.opensearch.instanceCount);
}

/** The logical id of a function of `stack` (for cdk-nag findings that name its ARN). */
export function logicalIdOf(stack: Stack, fn: ServiceFunction): string {
  return stack.getLogicalId(fn.node.defaultChild as CfnElement);
}
