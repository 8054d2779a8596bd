/**
 * Search on AWS: the OpenSearch domain, its access policy (one role per function whose access names `search`), the
 * index setup custom resource, the domain's alarms and the shared logs policy. Built by lib/stage.ts exactly as
 * bin/app.ts builds them, with bundling skipped (template-helpers.ts).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { SETUP_RETRY_BUDGET_MS, templateVersion } from '../../functions/adapters/aws/opensearch-indexes.js';
import { SEARCH_INDEX_SETUP_ENTRY } from '../../functions/contract/functions.js';
import { SEARCH_ACTIONS, SEARCH_LOGS_POLICY_NAME } from '../../lib/search-domain.js';
import {
  asArray,
  CONTEXT,
  flattenJoin,
  quickStage,
  type Resource,
  resourcesOf,
  SEARCH_CLIENTS,
  SEARCH_INDEX_SETUP_TIMEOUT,
  type ServiceTemplates,
  type Statement,
  serviceTemplates,
} from './template-helpers.js';

describe('stacks, search (bundling skipped)', () => {
  let stateful: ServiceTemplates['stateful'];
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];

  beforeAll(() => {
    ({ stateful, stateless, ours } = serviceTemplates());
  });

  it('runs an OpenSearch domain encrypted at rest and node to node, HTTPS only with TLS 1.2+, IAM only, retained', () => {
    stateful.resourceCountIs('AWS::OpenSearchService::Domain', 1);
    const [[, domain]] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain') as [[string, Resource]];
    expect(domain.DeletionPolicy).toBe('Retain');
    expect(domain.UpdateReplacePolicy).toBe('Retain');
    expect(domain.Properties).toMatchObject({
      EncryptionAtRestOptions: { Enabled: true },
      NodeToNodeEncryptionOptions: { Enabled: true },
      DomainEndpointOptions: { EnforceHTTPS: true, TLSSecurityPolicy: 'Policy-Min-TLS-1-2-2019-07' },
      ClusterConfig: { InstanceType: 't3.small.search', InstanceCount: 1, ZoneAwarenessEnabled: false, DedicatedMasterEnabled: false },
      EBSOptions: { EBSEnabled: true, VolumeSize: 10, VolumeType: 'gp3' },
      LogPublishingOptions: {
        SEARCH_SLOW_LOGS: { Enabled: true },
        INDEX_SLOW_LOGS: { Enabled: true },
        ES_APPLICATION_LOGS: { Enabled: true },
      },
    });
    // No fine-grained access control, no internal users, no VPC: every request is SigV4-signed and IAM decides.
    expect(domain.Properties?.AdvancedSecurityOptions).toBeUndefined();
    expect(domain.Properties?.VPCOptions).toBeUndefined();
    expect(domain.Properties?.AccessPolicies).toBeUndefined();
  });

  it('runs the OpenSearch minor version the contract and parity suites run on (functions/local/opensearch/pom.xml)', () => {
    const pom = readFileSync(resolve(import.meta.dirname, '../../functions/local/opensearch/pom.xml'), 'utf8');
    const tested = /<opensearch\.version>(\d+)\.(\d+)\.\d+<\/opensearch\.version>/.exec(pom);
    expect(tested).not.toBeNull();
    const [[, domain]] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain') as [[string, Resource]];
    expect(domain.Properties?.EngineVersion).toBe(`OpenSearch_${tested?.[1]}.${tested?.[2]}`);
  });

  it("limits the domain's access policy to one role per client function and the paths that function uses", () => {
    const [[, custom]] = resourcesOf(stateful, 'Custom::OpenSearchAccessPolicy') as [[string, Resource]];
    const call = JSON.parse(flattenJoin(custom.Properties?.Create)) as { action: string; parameters: { AccessPolicies: string } };
    expect(call.action).toBe('updateDomainConfig');
    const statements = (JSON.parse(call.parameters.AccessPolicies) as { Statement: Statement[] }).Statement;
    const [domainId] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain')[0] as [string, Resource];
    const roles = resourcesOf(stateful, 'AWS::IAM::Role');
    expect(statements).toHaveLength(Object.keys(SEARCH_CLIENTS).length);
    for (const [entry, access] of Object.entries(SEARCH_CLIENTS)) {
      const [roleId] = roles.find(([, role]) => (role.Properties?.Description as string).startsWith(`Execution role of ${entry} `)) as [
        string,
        Resource,
      ];
      const statement = statements.find(
        (candidate) => JSON.stringify(candidate.Principal) === JSON.stringify({ AWS: `{{${roleId}.Arn}}` }),
      );
      expect(statement, entry).toBeDefined();
      expect(statement?.Effect).toBe('Allow');
      expect(asArray(statement?.Action as string | string[]).sort(), entry).toEqual([...SEARCH_ACTIONS[access]].sort());
      const expected = { search: '/resources/_search', index: '/resources/_bulk', admin: '/*' }[access];
      expect(statement?.Resource, entry).toBe(`{{${domainId}.Arn}}${expected}`);
    }
    expect(JSON.stringify(statements)).not.toContain('"AWS":"*"');
  });

  it('installs the index template on every deployment through a custom resource that changes with the template', () => {
    const [setupId] = ours.get(SEARCH_INDEX_SETUP_ENTRY) as [string, Resource];
    const [[, resource]] = resourcesOf(stateless, 'Custom::SearchIndexSetup') as [[string, Resource]];
    expect(resource.Properties).toMatchObject({ Alias: 'resources', TemplateVersion: templateVersion() });
    const serviceToken = (resource.Properties?.ServiceToken as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    const framework = stateless.findResources('AWS::Lambda::Function')[serviceToken] as Resource;
    expect(framework.Properties?.Environment).toEqual({ Variables: { USER_ON_EVENT_FUNCTION_ARN: { 'Fn::GetAtt': [setupId, 'Arn'] } } });
  });

  it('gives the index setup 10 minutes of retries within its timeout, and index administration the replica count of one node', () => {
    const [, setup] = ours.get(SEARCH_INDEX_SETUP_ENTRY) as [string, Resource];
    expect(setup.Properties?.Timeout).toBe(SEARCH_INDEX_SETUP_TIMEOUT.toSeconds());
    expect(SEARCH_INDEX_SETUP_TIMEOUT.toMilliseconds()).toBeGreaterThanOrEqual(SETUP_RETRY_BUDGET_MS + 60_000);
    expect(SEARCH_INDEX_SETUP_TIMEOUT.toMinutes()).toBeLessThan(15);
    for (const [entry, [, fn]] of ours) {
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.OPENSEARCH_REPLICAS, entry).toBe(SEARCH_CLIENTS[entry] === 'admin' ? '0' : undefined);
    }
    stateless.hasResourceProperties('Custom::SearchIndexSetup', { TemplateVersion: templateVersion(0) });
  });

  it('alarms on the OpenSearch domain: red, yellow, free storage, blocked writes, JVM memory pressure, failed snapshots', () => {
    const [domainId] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain')[0] as [string, Resource];
    const [topicId] = resourcesOf(stateless, 'AWS::SNS::Topic')[0] as [string, Resource];
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm').filter(([, alarm]) => alarm.Properties?.Namespace === 'AWS/ES');
    const byMetric = new Map(
      alarms.map(([, alarm]) => [alarm.Properties?.MetricName as string, alarm.Properties as Record<string, unknown>]),
    );
    expect([...byMetric.keys()].sort()).toEqual([
      'AutomatedSnapshotFailure',
      'ClusterIndexWritesBlocked',
      'ClusterStatus.red',
      'ClusterStatus.yellow',
      'FreeStorageSpace',
      'JVMMemoryPressure',
    ]);
    for (const [, alarm] of alarms) {
      expect(alarm.Properties?.AlarmActions).toEqual([{ Ref: topicId }]);
      const dimensions = JSON.stringify(alarm.Properties?.Dimensions);
      expect(dimensions).toContain('"Name":"DomainName"');
      expect(dimensions).toContain(domainId);
      expect(dimensions).toContain('"Name":"ClientId"');
    }
    const atLeastOne = { Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Statistic: 'Maximum' };
    expect(byMetric.get('ClusterStatus.red')).toMatchObject({ ...atLeastOne, Period: 60, EvaluationPeriods: 1 });
    expect(byMetric.get('ClusterStatus.yellow')).toMatchObject({ ...atLeastOne, Period: 60, EvaluationPeriods: 5 });
    expect(byMetric.get('ClusterIndexWritesBlocked')).toMatchObject({ ...atLeastOne, Period: 300 });
    expect(byMetric.get('AutomatedSnapshotFailure')).toMatchObject({ ...atLeastOne, Period: 60 });
    // 20% of the default 10 GiB volume, in MiB (the metric's unit).
    expect(byMetric.get('FreeStorageSpace')).toMatchObject({
      Threshold: 2048,
      ComparisonOperator: 'LessThanOrEqualToThreshold',
      Statistic: 'Minimum',
      Period: 60,
    });
    expect(byMetric.get('JVMMemoryPressure')).toMatchObject({
      Threshold: 80,
      ComparisonOperator: 'GreaterThanThreshold',
      Statistic: 'Maximum',
      EvaluationPeriods: 3,
    });
  });

  it('lets OpenSearch publish its logs through one resource policy shared by every stage, never deleted by one', () => {
    expect(resourcesOf(stateful, 'Custom::CloudwatchLogResourcePolicy')).toEqual([]);
    const policies = resourcesOf(stateful, 'Custom::SharedLogsResourcePolicy');
    expect(policies).toHaveLength(1);
    const [[policyId, policy]] = policies as [[string, Resource]];
    const call = JSON.parse(flattenJoin(policy.Properties?.Create)) as {
      action: string;
      parameters: { policyName: string; policyDocument: string };
      physicalResourceId: { id: string };
    };
    expect(call).toMatchObject({
      action: 'putResourcePolicy',
      parameters: { policyName: SEARCH_LOGS_POLICY_NAME },
      physicalResourceId: { id: SEARCH_LOGS_POLICY_NAME },
    });
    expect(policy.Properties?.Update).toEqual(policy.Properties?.Create);
    expect(policy.Properties?.Delete).toBeUndefined();
    const document = JSON.parse(call.parameters.policyDocument) as { Statement: (Statement & { Condition: unknown })[] };
    expect(document.Statement).toEqual([
      expect.objectContaining({
        Effect: 'Allow',
        Principal: { Service: 'es.amazonaws.com' },
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: 'arn:{{AWS::Partition}}:logs:{{AWS::Region}}:{{AWS::AccountId}}:log-group:DeviceScenarioService-*',
        Condition: {
          StringEquals: { 'aws:SourceAccount': '{{AWS::AccountId}}' },
          ArnLike: { 'aws:SourceArn': 'arn:{{AWS::Partition}}:es:{{AWS::Region}}:{{AWS::AccountId}}:domain/*' },
        },
      }),
    ]);
    // Every stage puts the same document under the same name: one policy per account and region, whatever the stages.
    const other = quickStage({ stage: 'other' }).stateful;
    const [[, otherPolicy]] = resourcesOf(other, 'Custom::SharedLogsResourcePolicy') as [[string, Resource]];
    expect(flattenJoin(otherPolicy.Properties?.Create)).toBe(flattenJoin(policy.Properties?.Create));
    // The domain (whose log publishing needs the policy) is created or updated after it.
    const [[, domain]] = resourcesOf(stateful, 'AWS::OpenSearchService::Domain') as [[string, Resource & { DependsOn?: string[] }]];
    expect(domain.DependsOn).toContain(policyId);
    // Log groups are named by CloudFormation `<stack name>-<logical id>-<suffix>`: within the policy's scope.
    for (const [id, logGroup] of resourcesOf(stateful, 'AWS::Logs::LogGroup'))
      expect(logGroup.Properties?.LogGroupName, id).toBeUndefined();
    expect(CONTEXT.stage).toBe('test');
  });
});
