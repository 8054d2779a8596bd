/**
 * One stage of the service: its stateful and stateless stacks, wired together. Used by bin/app.ts and by the
 * infrastructure tests, so that both build exactly the same thing.
 */
import { type App, Aspects, type Environment } from 'aws-cdk-lib';
import type { FunctionDefinition } from '../functions/contract/function.js';
import type { RouteDefinition } from '../functions/contract/route.js';
import { FunctionLogGroups } from './function-log-groups.js';
import { SERVICE_STACK_PREFIX, type ServiceSettings } from './settings.js';
import { StatefulStack } from './stateful-stack.js';
import { StatelessStack, type StatelessStackProps } from './stateless-stack.js';

/** The two stacks of a stage. */
export interface ServiceStage {
  stateful: StatefulStack;
  stateless: StatelessStack;
}

/** What a stage runs: every route served on AWS and every function no route runs. */
export interface ServiceDefinitions {
  /** AWS_ROUTES of functions/contract/routes.ts, or a test's fixtures. */
  routes: readonly RouteDefinition[];
  /** FUNCTIONS of functions/contract/functions.ts, or a test's fixtures. */
  functions: readonly FunctionDefinition[];
}

/** Creates `<SERVICE_STACK_PREFIX>-<stage>-Stateful` and `-Stateless` in `app`, both built from `definitions`. */
export function createStage(app: App, settings: ServiceSettings, definitions: ServiceDefinitions, env: Environment = {}): ServiceStage {
  const prefix = `${SERVICE_STACK_PREFIX}-${settings.stage}`;
  const stateful = new StatefulStack(app, `${prefix}-Stateful`, {
    env,
    settings,
    ...definitions,
    description: `Device scenario service (${settings.stage}): tables, archive bucket, OpenSearch domain, Cognito user pool; retained on deletion.`,
  });
  const stateless = new StatelessStack(app, `${prefix}-Stateless`, {
    env,
    settings,
    ...definitions,
    description: `Device scenario service (${settings.stage}): functions, HTTP APIs, alarms.`,
    ...statefulResources(stateful, definitions.functions),
  });
  // Functions aws-cdk-lib adds on its own log to groups with the stage's retention too.
  for (const stack of [stateful, stateless]) Aspects.of(stack).add(new FunctionLogGroups(settings.logRetention));
  return { stateful, stateless };
}

/**
 * What the stateless stack uses of the stateful one: tables, bucket, search domain, identity, the user pool (for
 * users administration's grants), keys. The alarm of the
 * Cognito trigger is named after its definition in `functions`.
 */
export function statefulResources(
  stateful: StatefulStack,
  functions: readonly FunctionDefinition[],
): Pick<
  StatelessStackProps,
  'tables' | 'archiveBucket' | 'archiveBucketArnExport' | 'search' | 'identity' | 'cursorSigningKey' | 'deviceTokens' | 'userPool'
> {
  return {
    tables: stateful.tables,
    archiveBucket: stateful.archiveBucket,
    archiveBucketArnExport: stateful.archiveBucketArnExport,
    search: {
      domainEndpoint: stateful.search.domain.domainEndpoint,
      domainArnExport: stateful.searchDomainArnExport,
      clientRoles: stateful.search.clientRoles,
      domain: stateful.search.domain,
    },
    identity: {
      issuer: stateful.identity.issuer,
      jwksUrl: stateful.identity.jwksUrl,
      clientId: stateful.identity.client.userPoolClientId,
      preTokenGeneration: { fn: stateful.identity.preTokenGeneration, label: cognitoLabel(functions) },
    },
    cursorSigningKey: stateful.cursorSigningKey,
    userPool: { userPoolId: stateful.identity.userPool.userPoolId, userPoolArn: stateful.identity.userPool.userPoolArn },
    deviceTokens: { keyArn: stateful.deviceTokenKey.key.keyArn, roles: stateful.deviceTokenKey.roles },
  };
}

/** The alarm name of the Cognito trigger (its definition's label). */
function cognitoLabel(functions: readonly FunctionDefinition[]): string {
  return functions.find((definition) => definition.trigger.kind === 'cognito')?.label ?? 'Cognito trigger';
}
