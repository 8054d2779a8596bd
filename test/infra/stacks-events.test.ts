/**
 * The functions no route runs, wired to their triggers: table streams, S3 notifications, schedules. Built by
 * lib/stage.ts exactly as bin/app.ts builds them, with bundling skipped (template-helpers.ts).
 */
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADMINISTRATIVE_CHANGES_ENTRY,
  ARCHIVE_UPLOADED,
  CONTINUOUS_ROLLOUTS_ENTRY,
  DEPLOYMENT_CHANGES_ENTRY,
  HEARTBEAT_SWEEPER,
  SEARCH_INDEXER_ENTRY,
  UPLOAD_SWEEPER,
} from '../../functions/contract/functions.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import {
  asArray,
  deniesInsecureTransport,
  type Resource,
  resourcesOf,
  type ServiceTemplates,
  schedulesOf,
  serviceTemplates,
  statementsOf,
  TABLE_ID_PREFIX,
} from './template-helpers.js';

describe('stacks, events (bundling skipped)', () => {
  let stateful: ServiceTemplates['stateful'];
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];
  let policyOf: ServiceTemplates['policyOf'];

  beforeAll(() => {
    ({ stateful, stateless, ours, policyOf } = serviceTemplates());
  });

  it('feeds the indexer from the devices and scenarios streams, retrying from the failed record, failures to an encrypted queue', () => {
    // The indexer's two, the deployment changes', the continuous rollouts', the administrative changes', the command
    // changes' (test/infra/commands.test.ts), the rollout changes' (test/infra/rollout-changes.test.ts), the alert
    // changes', the rollout worker's (test/infra/rollouts.test.ts), and the webhook fan-out's queue and the webhook
    // deliveries' stream (test/infra/webhook-deliveries.test.ts).
    stateless.resourceCountIs('AWS::Lambda::EventSourceMapping', 11);
    const mappings = resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties?.FunctionName) === JSON.stringify({ Ref: ours.get(SEARCH_INDEXER_ENTRY)?.[0] }),
    );
    expect(mappings).toHaveLength(2);
    for (const [id, mapping] of mappings) {
      expect(mapping.Properties, id).toMatchObject({
        FunctionName: { Ref: ours.get(SEARCH_INDEXER_ENTRY)?.[0] },
        StartingPosition: 'TRIM_HORIZON',
        BatchSize: 100,
        BisectBatchOnFunctionError: true,
        MaximumRetryAttempts: 10,
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        DestinationConfig: {
          OnFailure: { Destination: { 'Fn::GetAtt': [expect.stringMatching(/^SearchIndexerDeadLetterQueue/), 'Arn'] } },
        },
      });
    }
    const sources = JSON.stringify(mappings.map(([, mapping]) => mapping.Properties?.EventSourceArn));
    expect(sources).toMatch(/DevicesTable.*StreamArn/);
    expect(sources).toMatch(/ScenariosTable.*StreamArn/);
    // Eleven dead-letter queues (one per stream consumer, the archive validator's, the rollout queue's, the webhook
    // events queue's), the rollout queue (test/infra/rollouts.test.ts) and the webhook events queue
    // (test/infra/webhook-deliveries.test.ts): all encrypted, all TLS only.
    stateless.resourceCountIs('AWS::SQS::Queue', 13);
    for (const [id, queue] of resourcesOf(stateless, 'AWS::SQS::Queue')) {
      expect(queue.Properties, id).toMatchObject({ SqsManagedSseEnabled: true });
      const workQueue = id.startsWith('RolloutWorkQueue') || id.startsWith('WebhookEventsQueue');
      if (!workQueue) expect(queue.Properties?.MessageRetentionPeriod, id).toBe(14 * 24 * 3600);
    }
    const queuePolicies = resourcesOf(stateless, 'AWS::SQS::QueuePolicy');
    expect(queuePolicies).toHaveLength(13);
    for (const [id, policy] of queuePolicies) expect(deniesInsecureTransport(policy.Properties?.PolicyDocument), id).toBe(true);
  });

  it('derives history entries and events from the deployments stream, from its start, retrying until the records near expiry', () => {
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ours.get(DEPLOYMENT_CHANGES_ENTRY)?.[0] },
      EventSourceArn: { 'Fn::ImportValue': Match.stringLikeRegexp('DeploymentsTable.*StreamArn') },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      // Idempotent: retried until the records near the stream's 24-hour retention, not dropped after a few attempts.
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 23 * 3600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^DeploymentChangesDeadLetterQueue'), 'Arn'] } },
      },
    });
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
    });
  });

  it('joins devices to continuous rollouts from the devices stream, from its start, retrying until the records near expiry', () => {
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ours.get(CONTINUOUS_ROLLOUTS_ENTRY)?.[0] },
      EventSourceArn: { 'Fn::ImportValue': Match.stringLikeRegexp('DevicesTable.*StreamArn') },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 23 * 3600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ContinuousRolloutsDeadLetterQueue'), 'Arn'] } },
      },
    });
  });

  it("emits the audit table's entries as events from its NEW_IMAGE stream, from its start, retrying until the records near expiry", () => {
    stateless.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: ours.get(ADMINISTRATIVE_CHANGES_ENTRY)?.[0] },
      EventSourceArn: { 'Fn::ImportValue': Match.stringLikeRegexp('AuditTable.*StreamArn') },
      StartingPosition: 'TRIM_HORIZON',
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 23 * 3600,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^AdministrativeChangesDeadLetterQueue'), 'Arn'] } },
      },
    });
    const [id, fn] = ours.get(ADMINISTRATIVE_CHANGES_ENTRY) as [string, Resource];
    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    // It publishes; it reads no table (the event source reads the stream) and needs no table name.
    expect(variables.EVENT_BUS_NAME, id).toBeDefined();
    expect(Object.keys(variables).filter((name) => name.endsWith('_TABLE'))).toEqual([]);
    stateful.hasResourceProperties('AWS::DynamoDB::Table', {
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: [Match.objectLike({ IndexName: 'actor' })],
      StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
    });
  });

  it('invokes the archive function for objects created under the upload prefix, failures to a dead-letter queue', () => {
    stateless.hasResourceProperties('Custom::S3BucketNotifications', {
      NotificationConfiguration: {
        LambdaFunctionConfigurations: [
          {
            Events: ['s3:ObjectCreated:*'],
            Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: ARCHIVE_UPLOADED.prefix }] } },
            LambdaFunctionArn: { 'Fn::GetAtt': [ours.get(ARCHIVE_UPLOADED.entry)?.[0], 'Arn'] },
          },
        ],
      },
      Managed: false,
    });
    stateless.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: ours.get(ARCHIVE_UPLOADED.entry)?.[0] },
      MaximumRetryAttempts: 2,
      DestinationConfig: {
        OnFailure: { Destination: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ArchiveUploadedDeadLetterQueue'), 'Arn'] } },
      },
    });
  });

  it('runs the upload sweeper every few minutes on the sparse sweep index of the scenarios table, heading and deleting objects only', () => {
    const [, scenarios] = resourcesOf(stateful, 'AWS::DynamoDB::Table').find(([id]) => id.startsWith(TABLE_ID_PREFIX.scenarios)) as [
      string,
      Resource,
    ];
    expect(scenarios.Properties?.GlobalSecondaryIndexes).toEqual([
      {
        IndexName: 'sweep',
        KeySchema: [
          { AttributeName: 'sweepShard', KeyType: 'HASH' },
          { AttributeName: 'sweepAt', KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      },
    ]);
    const [sweeperId] = ours.get(UPLOAD_SWEEPER.entry) as [string, Resource];
    stateless.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: `rate(${UPLOAD_SWEEPER.everyMinutes} minutes)`,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] } })],
    });
    stateless.hasResourceProperties('AWS::Lambda::Permission', {
      FunctionName: { 'Fn::GetAtt': [sweeperId, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^UploadSweeperSchedule'), 'Arn'] },
    });
    const policy = policyOf(UPLOAD_SWEEPER.entry);
    expect(policy).toContain('/index/sweep');
    expect(policy).toContain('dynamodb:Query');
    expect(policy).toMatch(/"Action":\["s3:GetObject","s3:DeleteObject"\]/);
    expect(policy).not.toMatch(/s3:PutObject|CompaniesTable|DevicesTable|DeploymentsTable|events:PutEvents/);
  });

  it('runs the heartbeat sweeper every minute with EventBridge Scheduler, on the sparse sweep index of the presence table', () => {
    const [, presence] = resourcesOf(stateful, 'AWS::DynamoDB::Table').find(([id]) => id.startsWith(TABLE_ID_PREFIX.presence)) as [
      string,
      Resource,
    ];
    expect(presence.DeletionPolicy).toBe('Retain');
    expect(presence.Properties).toMatchObject({
      KeySchema: [{ AttributeName: 'deviceKey', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      SSESpecification: { SSEEnabled: true },
      GlobalSecondaryIndexes: [
        {
          IndexName: 'sweep',
          KeySchema: [
            { AttributeName: 'sweepShard', KeyType: 'HASH' },
            { AttributeName: 'sweepAt', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
    // No stream: a heartbeat is not a change anyone consumes.
    expect(presence.Properties?.StreamSpecification).toBeUndefined();
    const [sweeperId, sweeper] = ours.get(HEARTBEAT_SWEEPER.entry) as [string, Resource];
    // One schedule per scheduled function (the rollout sweeper's: test/infra/rollouts.test.ts).
    const schedules = schedulesOf(stateless, sweeperId);
    expect(schedules).toHaveLength(1);
    const [, schedule] = schedules[0] as [string, Resource];
    expect(schedule.Properties).toMatchObject({
      ScheduleExpression: `rate(${HEARTBEAT_SWEEPER.everyMinutes} minute)`,
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
    expect(schedule.Properties?.GroupName).toBeUndefined();
    expect(schedule.Properties?.Name).toBeUndefined();
    // The schedule's role may invoke this function (and its versions) only.
    const roleId = (schedule.Properties?.Target as { RoleArn: { 'Fn::GetAtt': [string, string] } }).RoleArn['Fn::GetAtt'][0];
    const [, role] = resourcesOf(stateless, 'AWS::IAM::Role').find(([id]) => id === roleId) as [string, Resource];
    expect(JSON.stringify(role.Properties?.AssumeRolePolicyDocument)).toContain('scheduler.amazonaws.com');
    expect(JSON.stringify(role.Properties?.AssumeRolePolicyDocument)).toContain('aws:SourceAccount');
    const invoke = statementsOf(stateless).filter(([id]) => id.startsWith(roleId.replace(/[0-9A-F]{8}$/, '')));
    expect(invoke.flatMap(([, statement]) => asArray(statement.Action))).toEqual(['lambda:InvokeFunction']);
    expect(JSON.stringify(invoke.map(([, statement]) => statement.Resource))).not.toMatch(new RegExp(`"Fn::GetAtt":\\["(?!${sweeperId})`));
    // Runs shorter than the schedule's period, so they do not overlap; presence and devices only.
    expect(sweeper.Properties?.Timeout).toBeLessThan(60 * HEARTBEAT_SWEEPER.everyMinutes);
    const policy = policyOf(HEARTBEAT_SWEEPER.entry);
    expect(policy).toContain('PresenceTable');
    expect(policy).toContain('/index/sweep');
    expect(policy).toContain('dynamodb:Query');
    expect(policy).not.toMatch(/s3:|CompaniesTable|ScenariosTable|DeploymentsTable|events:PutEvents|kms:/);
    // Its alarms beyond errors and throttles: no run for 10 minutes (no data counts), a run near its timeout.
    const dimensions = JSON.stringify([{ Name: 'FunctionName', Value: { Ref: sweeperId } }]);
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm').filter(
      ([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions) === dimensions,
    );
    expect(alarms.map(([, alarm]) => alarm.Properties?.MetricName).sort()).toEqual(['Duration', 'Errors', 'Invocations', 'Throttles']);
    const missed = alarms.find(([, alarm]) => alarm.Properties?.MetricName === 'Invocations')?.[1];
    expect(missed?.Properties).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: ALARM_THRESHOLDS.scheduledMissedPeriods,
      TreatMissingData: 'breaching',
    });
    const duration = alarms.find(([, alarm]) => alarm.Properties?.MetricName === 'Duration')?.[1];
    expect(duration?.Properties).toMatchObject({
      Statistic: 'Maximum',
      Threshold: ((sweeper.Properties?.Timeout as number) * 1000 * ALARM_THRESHOLDS.scheduledDurationPercent) / 100,
    });
  });
});
