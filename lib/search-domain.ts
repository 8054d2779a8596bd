/**
 * The OpenSearch domain of the search index, and who may use it. The domain accepts only SigV4-signed requests
 * (IAM, no fine-grained access control, no anonymous access): its access policy names one role per function that
 * searches, indexes or administers the index, each limited to what that function calls (its access's `search`). Those roles
 * are created here, in the stateful stack, because the stateless stack already depends on this one: a domain policy
 * naming roles of the stateless stack would make the two stacks depend on each other. The stateless stack imports
 * each role (mutable) and adds the function's other permissions to it.
 */
import { Aws, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { EbsDeviceVolumeType } from 'aws-cdk-lib/aws-ec2';
import { ArnPrincipal, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Domain, EngineVersion, TLSSecurityPolicy } from 'aws-cdk-lib/aws-opensearchservice';
import { AwsCustomResource, AwsCustomResourcePolicy, PhysicalResourceId } from 'aws-cdk-lib/custom-resources';
import { Construct } from 'constructs';
import { DEFAULT_SEARCH_ALIAS } from '../functions/contract/environment.js';
import type { SearchAccess } from '../functions/contract/route.js';
import { ignoreCfnLint } from './cfn-lint.js';
import { acknowledge, managedPolicyFinding, wildcardResourceFinding } from './nag.js';
import { functionIdOf } from './service-function.js';
import { SERVICE_STACK_PREFIX } from './settings.js';

/**
 * Name of the one CloudWatch Logs resource policy letting OpenSearch publish to this service's log groups, shared by
 * every stage of an account and region (CloudWatch Logs allows 10 resource policies per region).
 */
export const SEARCH_LOGS_POLICY_NAME = `${SERVICE_STACK_PREFIX}-OpenSearchLogs`;

/**
 * The shared policy's document. It depends on nothing stage-specific, so every stage writes the same document under
 * the same name: es.amazonaws.com, on behalf of this account's domains, may write to the log groups whose names
 * CloudFormation generated in this service's stacks (`<SERVICE_STACK_PREFIX>-<stage>-Stateful-<logical id>-<suffix>`).
 */
export function searchLogsPolicyDocument(): string {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Sid: 'OpenSearchLogPublishing',
        Effect: 'Allow',
        Principal: { Service: 'es.amazonaws.com' },
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: `arn:${Aws.PARTITION}:logs:${Aws.REGION}:${Aws.ACCOUNT_ID}:log-group:${SERVICE_STACK_PREFIX}-*`,
        Condition: {
          StringEquals: { 'aws:SourceAccount': Aws.ACCOUNT_ID },
          ArnLike: { 'aws:SourceArn': `arn:${Aws.PARTITION}:es:${Aws.REGION}:${Aws.ACCOUNT_ID}:domain/*` },
        },
      },
    ],
  });
}

/** The alias every search and write names (OPENSEARCH_INDEX); concrete indexes are `<alias>-<UTC time>`. */
export const SEARCH_INDEX_ALIAS = DEFAULT_SEARCH_ALIAS;

/**
 * What a function may do on the domain (functions/contract/route.ts): `search`, `index` or `admin`. OpenSearch
 * matches the resources of each level against the request path, so a `search` client cannot `_bulk` even though it
 * may POST.
 */
export type { SearchAccess };

/** The `es:ESHttp*` actions of each access level. */
export const SEARCH_ACTIONS: Readonly<Record<SearchAccess, readonly string[]>> = {
  search: ['es:ESHttpGet', 'es:ESHttpPost'],
  index: ['es:ESHttpPost'],
  admin: ['es:ESHttpGet', 'es:ESHttpHead', 'es:ESHttpPost', 'es:ESHttpPut', 'es:ESHttpDelete'],
};

/** The domain sub-resources (`<domain ARN>/<path>`) of each access level. */
export function searchResources(access: SearchAccess, domainArn: string, alias = SEARCH_INDEX_ALIAS): string[] {
  switch (access) {
    case 'search':
      return [`${domainArn}/${alias}/_search`];
    case 'index':
      return [`${domainArn}/${alias}/_bulk`];
    case 'admin':
      return [`${domainArn}/*`];
  }
}

/** Sizing of the domain (CDK context, lib/settings.ts). */
export interface SearchDomainProps {
  instanceType: string;
  instanceCount: number;
  volumeGiB: number;
  logRetention: RetentionDays;
  /** The access level of each function that uses the domain, by handler module (its access's `search`). */
  clients: ReadonlyMap<string, SearchAccess>;
}

/**
 * The domain: OpenSearch 2.19, encryption at rest (AWS owned key) and node to node, HTTPS only with TLS 1.2 or
 * newer, gp3 volumes, slow and application logs to CloudWatch (allowed by the resource policy shared by all stages,
 * SEARCH_LOGS_POLICY_NAME), zone awareness when there are several data nodes,
 * retained on stack deletion, and the access policy described above.
 */
export class SearchDomain extends Construct {
  readonly domain: Domain;
  /** The execution role of each client function (SearchDomainProps.clients), by handler module. */
  readonly clientRoles: ReadonlyMap<string, Role>;
  /** Puts the shared CloudWatch Logs resource policy (SEARCH_LOGS_POLICY_NAME) the domain publishes its logs with. */
  readonly logsPolicy: AwsCustomResource;

  constructor(scope: Construct, id: string, props: SearchDomainProps) {
    super(scope, id);
    const count = props.instanceCount;
    const zones = count === 1 ? 1 : count % 3 === 0 ? 3 : count % 2 === 0 ? 2 : 0;
    if (zones === 0) {
      throw new Error(
        `CDK context 'opensearchInstanceCount' must be 1, an even number or a multiple of 3 (nodes spread evenly over 2 or 3 zones); got ${count}.`,
      );
    }
    this.domain = this.createDomain(props, zones);
    this.logsPolicy = this.createLogsPolicy();
    this.domain.node.addDependency(this.logsPolicy);
    this.clientRoles = this.createClientRoles(props.clients);
    this.acknowledgeFindings(zones);
  }

  /** The domain (see the class comment), its data nodes spread over `zones` zones. */
  private createDomain(props: SearchDomainProps, zones: number): Domain {
    const count = props.instanceCount;
    const logGroup = (name: string) => new LogGroup(this, name, { retention: props.logRetention, removalPolicy: RemovalPolicy.RETAIN });

    return new Domain(this, 'Domain', {
      version: EngineVersion.OPENSEARCH_2_19,
      capacity: { dataNodes: count, dataNodeInstanceType: props.instanceType, multiAzWithStandbyEnabled: false },
      ebs: { enabled: true, volumeSize: props.volumeGiB, volumeType: EbsDeviceVolumeType.GP3 },
      ...(zones > 1 ? { zoneAwareness: { enabled: true, availabilityZoneCount: zones } } : {}),
      encryptionAtRest: { enabled: true },
      nodeToNodeEncryption: true,
      enforceHttps: true,
      tlsSecurityPolicy: TLSSecurityPolicy.TLS_1_2,
      logging: {
        slowSearchLogEnabled: true,
        slowSearchLogGroup: logGroup('SlowSearchLogs'),
        slowIndexLogEnabled: true,
        slowIndexLogGroup: logGroup('SlowIndexLogs'),
        appLogEnabled: true,
        appLogGroup: logGroup('ApplicationLogs'),
      },
      // CDK would add one CloudWatch Logs resource policy per domain, i.e. per stage, of the 10 a region allows; the
      // shared one below replaces them.
      suppressLogsResourcePolicy: true,
      // A changed engine version upgrades the domain in place instead of replacing it (and its data).
      enableVersionUpgrade: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
  }

  /**
   * The shared CloudWatch Logs resource policy, put (created or overwritten with the same document) on every
   * deployment of every stage, before the domain needs it; never deleted by a stage, since the other stages use it too
   * (docs/aws.md, "Commands").
   */
  private createLogsPolicy(): AwsCustomResource {
    const logsPolicy = new AwsCustomResource(this, 'LogsResourcePolicy', {
      resourceType: 'Custom::SharedLogsResourcePolicy',
      onUpdate: {
        service: 'CloudWatchLogs',
        action: 'putResourcePolicy',
        parameters: { policyName: SEARCH_LOGS_POLICY_NAME, policyDocument: searchLogsPolicyDocument() },
        physicalResourceId: PhysicalResourceId.of(SEARCH_LOGS_POLICY_NAME),
      },
      policy: AwsCustomResourcePolicy.fromSdkCalls({ resources: AwsCustomResourcePolicy.ANY_RESOURCE }),
      installLatestAwsSdk: false,
    });
    return logsPolicy;
  }

  /** One role per client function, named in the domain's access policy with the paths of its access level. */
  private createClientRoles(clients: ReadonlyMap<string, SearchAccess>): Map<string, Role> {
    const roles = new Map<string, Role>();
    for (const [entry, access] of clients) {
      const role = new Role(this, `${functionIdOf(entry)}Role`, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `Execution role of ${entry} (OpenSearch access: ${access})`,
      });
      roles.set(entry, role);
      this.domain.addAccessPolicies(
        new PolicyStatement({
          principals: [new ArnPrincipal(role.roleArn)],
          actions: [...SEARCH_ACTIONS[access]],
          resources: searchResources(access, this.domain.domainArn),
        }),
      );
    }
    return roles;
  }

  private acknowledgeFindings(zones: number): void {
    acknowledge(
      this.domain,
      'AwsSolutions-OS1',
      'Not in a VPC by design: every request must be SigV4-signed by one of the roles named in the access policy, the functions ' +
        'run outside a VPC, and a VPC would add NAT gateways or endpoints (tens of USD a month) for no additional access control.',
    );
    acknowledge(
      this.domain,
      'AwsSolutions-OS3',
      'Access is granted to IAM roles, not IP addresses: the callers are Lambda functions without fixed addresses; the access ' +
        'policy names each role and limits it to the paths it uses (the `search` of its access).',
    );
    acknowledge(
      this.domain,
      'AwsSolutions-OS4',
      'No dedicated master nodes at the default size (one t3.small.search data node): the index is a rebuildable copy of ' +
        'DynamoDB (npm run reindex / the reindex function), so the cluster manager load and the availability target are low.',
    );
    if (zones === 1) {
      acknowledge(
        this.domain,
        'AwsSolutions-OS7',
        'Zone awareness needs at least two data nodes; the default is one node (minimum cost) and the index can be rebuilt ' +
          'from DynamoDB. Setting opensearchInstanceCount to 2 or more turns zone awareness on.',
      );
    }
    // The domain's access and log-publishing policies are applied by CDK's AwsCustomResource singleton function.
    const singleton = Stack.of(this).node.tryFindChild('AWS679f53fac002430cb0da5b7982bd2287');
    if (singleton !== undefined) {
      acknowledge(
        singleton,
        managedPolicyFinding('service-role/AWSLambdaBasicExecutionRole'),
        "CDK's AwsCustomResource function (applies the OpenSearch access policy and the CloudWatch Logs resource policy at " +
          'deploy time) is created by aws-cdk-lib with the basic execution managed policy; it runs only during deployments.',
      );
      ignoreCfnLint(
        singleton,
        'AWS::Lambda::Function',
        ['ES1005', 'WS1000'],
        "CDK's AwsCustomResource function runs only during deployments, with the memory aws-cdk-lib gives it (the Lambda " +
          'default) and without X-Ray tracing, which would need a wider role for a function that serves no request.',
      );
    }
    acknowledge(
      this.logsPolicy,
      wildcardResourceFinding('*'),
      'logs:PutResourcePolicy has no resource-level permissions; the AwsCustomResource uses it once per deployment to put the ' +
        'shared resource policy that lets OpenSearch publish its slow and application logs.',
    );
  }
}
