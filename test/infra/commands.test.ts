/**
 * Commands on AWS (docs/contract.md, "Commands"): the commands table, the consumer of its stream (events, desired
 * state tags) with its dead-letter queue, retries and alarms, the expiry sweeper on its schedule, and the least
 * privilege of every function touching commands. Built by lib/stage.ts exactly as bin/app.ts builds them, with
 * bundling skipped (template-helpers.ts).
 */

import { beforeAll, describe, expect, it } from 'vitest';
import {
  CONTINUOUS_ROLLOUTS_ENTRY,
  commandChanges,
  commandExpirySweeper,
  DEPLOYMENT_CHANGES_ENTRY,
  ROLLOUT_WORKER,
} from '../../functions/contract/functions.js';
import { commandCreate, deviceCommandStatusPost } from '../../functions/contract/routes/commands.js';
import { deviceDeploymentsGet } from '../../functions/contract/routes/device-side.js';
import { deviceDelete } from '../../functions/contract/routes/devices.js';
import { rolloutTargets } from '../../functions/contract/routes/rollouts.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import {
  asArray,
  baseGrants,
  deniesInsecureTransport,
  grantsOf,
  ITEM,
  READ,
  READ_WRITE,
  type Resource,
  resourcesOf,
  type ServiceTemplates,
  schedulesOf,
  serviceTemplates,
  statementsOf,
  TABLE_ID_PREFIX,
  tableId,
  tableReads,
  WRITE,
} from './template-helpers.js';

/** What a stream consumer is granted on its stream (aws-cdk-lib's DynamoEventSource). */
const STREAM_READ = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];

/** What a stream consumer may do with its dead-letter queue (send the descriptions of failed batches). */
const DEAD_LETTER_SEND = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];

describe('commands on AWS', () => {
  let stateful: ServiceTemplates['stateful'];
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];

  beforeAll(() => {
    ({ stateful, stateless, ours } = serviceTemplates());
  });

  const functionOf = (entry: string): [string, Resource] => {
    const found = ours.get(entry);
    expect(found, entry).toBeDefined();
    return found as [string, Resource];
  };
  /** The alarms whose only dimension is the function `functionId`, by metric name. */
  const alarmsOf = (functionId: string) =>
    new Map(
      resourcesOf(stateless, 'AWS::CloudWatch::Alarm')
        .filter(
          ([, alarm]) =>
            JSON.stringify(alarm.Properties?.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: functionId } }]),
        )
        .map(([, alarm]) => [alarm.Properties?.MetricName as string, alarm.Properties as Record<string, unknown>]),
    );

  it('keeps commands by device, newest last, in a retained table whose sparse sweep index orders pending ones by expiry, streaming both images', () => {
    const found = resourcesOf(stateful, 'AWS::DynamoDB::Table').filter(([id]) => id.startsWith(TABLE_ID_PREFIX.commands));
    expect(found).toHaveLength(1);
    const [, table] = found[0] as [string, Resource];
    expect(table.DeletionPolicy).toBe('Retain');
    expect(table.Properties).toMatchObject({
      KeySchema: [
        { AttributeName: 'pk', KeyType: 'HASH' },
        { AttributeName: 'sk', KeyType: 'RANGE' },
      ],
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
      // The consumer compares a command's state before and after each write.
      StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' },
      BillingMode: 'PAY_PER_REQUEST',
      DeletionProtectionEnabled: true,
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
    expect(table.Properties?.TimeToLiveSpecification).toBeUndefined();
  });

  it('derives events and desired state tags from the commands stream, from its start, retrying until the records near expiry, failures to its own encrypted queue', () => {
    const [functionId, fn] = functionOf(commandChanges.entry);
    const mappings = resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties?.FunctionName) === JSON.stringify({ Ref: functionId }),
    );
    expect(mappings).toHaveLength(1);
    const [, mapping] = mappings[0] as [string, Resource];
    const destination = (mapping.Properties?.DestinationConfig as { OnFailure: { Destination: { 'Fn::GetAtt': [string, string] } } })
      .OnFailure.Destination['Fn::GetAtt'][0];
    expect(destination).toMatch(/^CommandChangesDeadLetterQueue[0-9A-F]{8}$/);
    expect(mapping.Properties).toEqual({
      FunctionName: { Ref: functionId },
      EventSourceArn: { 'Fn::ImportValue': expect.stringMatching(/CommandsTable[0-9A-F]{8}StreamArn/) },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 500,
      MaximumBatchingWindowInSeconds: 1,
      BisectBatchOnFunctionError: true,
      // Idempotent: retried until the records near the stream's 24-hour retention, not dropped after a few attempts.
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 23 * 3600,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: { 'Fn::GetAtt': [destination, 'Arn'] } } },
    });
    const queue = resourcesOf(stateless, 'AWS::SQS::Queue').find(([id]) => id === destination)?.[1];
    expect(queue?.Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    const policies = resourcesOf(stateless, 'AWS::SQS::QueuePolicy').filter(([, policy]) =>
      JSON.stringify(policy.Properties?.Queues).includes(destination),
    );
    expect(policies).toHaveLength(1);
    expect(deniesInsecureTransport((policies[0] as [string, Resource])[1].Properties?.PolicyDocument)).toBe(true);
    // Its events go to the service's bus, whose name it is given.
    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables.EVENT_BUS_NAME).toEqual({ Ref: expect.stringMatching(/^DeploymentEvents[0-9A-F]{8}$/) });
    expect(fn.Properties?.Timeout).toBe(commandChanges.access.timeoutSeconds);
  });

  it('lets the command changes consumer read commands and slots, update single device items, count rollout results and publish events, nothing else', () => {
    const [functionId, fn] = functionOf(commandChanges.entry);
    const grants = grantsOf(stateless, fn);
    const stream = Object.keys(grants).find((name) => /CommandsTable[0-9A-F]{8}StreamArn/.test(name)) as string;
    expect(grants).toEqual({
      ...baseGrants(functionId),
      // The event source lists the table's streams (no resource-level permission), then reads its own.
      '*': ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
      [stream]: STREAM_READ,
      CommandChangesDeadLetterQueue: DEAD_LETTER_SEND,
      // A device's pending commands and active slots make its desired state tag, stored in its item.
      ...tableReads('commands'),
      ...tableReads('deployments'),
      [tableId('devices')]: ITEM,
      // A final command of a rollout is counted for its wave (a Put and an Update of one transaction).
      [tableId('rollouts')]: WRITE,
      DeploymentEvents: ['events:PutEvents'],
    });
  });

  it('alarms on the command changes consumer: errors, throttles, its oldest unprocessed record and any dead letter', () => {
    const [functionId] = functionOf(commandChanges.entry);
    const alarms = alarmsOf(functionId);
    expect([...alarms.keys()].sort()).toEqual(['Errors', 'IteratorAge', 'Throttles']);
    expect(alarms.get('IteratorAge')).toMatchObject({
      Threshold: ALARM_THRESHOLDS.iteratorAgeMs,
      Statistic: 'Maximum',
      EvaluationPeriods: 2,
    });
    const deadLetters = resourcesOf(stateless, 'AWS::CloudWatch::Alarm').filter(
      ([, alarm]) =>
        alarm.Properties?.MetricName === 'ApproximateNumberOfMessagesVisible' &&
        /"CommandChangesDeadLetterQueue[0-9A-F]{8}"/.test(JSON.stringify(alarm.Properties?.Dimensions)),
    );
    expect(deadLetters).toHaveLength(1);
    expect((deadLetters[0] as [string, Resource])[1].Properties).toMatchObject({
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
    });
  });

  it('runs the expiry sweeper every minute from EventBridge Scheduler, within the minute, on the commands table and its sweep index only', () => {
    const [sweeperId, sweeper] = functionOf(commandExpirySweeper.entry);
    const schedules = schedulesOf(stateless, sweeperId);
    expect(schedules).toHaveLength(1);
    const [, schedule] = schedules[0] as [string, Resource];
    expect(schedule.Properties).toMatchObject({
      ScheduleExpression: `rate(${commandExpirySweeper.trigger.everyMinutes} minute)`,
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: { 'Fn::GetAtt': [sweeperId, 'Arn'] }, RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
    expect(commandExpirySweeper.trigger.everyMinutes).toBe(1);
    // The schedule's role: assumed by EventBridge Scheduler for this account, invoking this function only.
    const roleId = (schedule.Properties?.Target as { RoleArn: { 'Fn::GetAtt': [string, string] } }).RoleArn['Fn::GetAtt'][0];
    const [, role] = resourcesOf(stateless, 'AWS::IAM::Role').find(([id]) => id === roleId) as [string, Resource];
    expect(JSON.stringify(role.Properties?.AssumeRolePolicyDocument)).toMatch(
      /scheduler\.amazonaws\.com.*aws:SourceAccount|aws:SourceAccount.*scheduler\.amazonaws\.com/,
    );
    const invoke = statementsOf(stateless).filter(([id]) => id.startsWith(roleId.replace(/[0-9A-F]{8}$/, '')));
    expect(invoke.flatMap(([, statement]) => asArray(statement.Action))).toEqual(['lambda:InvokeFunction']);
    expect(JSON.stringify(invoke.map(([, statement]) => statement.Resource))).not.toMatch(new RegExp(`"Fn::GetAtt":\\["(?!${sweeperId})`));
    // Runs shorter than the schedule's period, so that they do not overlap.
    expect(sweeper.Properties?.Timeout).toBeLessThan(60 * commandExpirySweeper.trigger.everyMinutes);
    // Queries the sweep index for overdue commands and expires each with a conditional update: nothing else.
    expect(grantsOf(stateless, sweeper)).toEqual({
      ...baseGrants(sweeperId),
      ...tableReads('commands'),
      [tableId('commands')]: READ_WRITE,
    });
    // Besides errors and throttles: no run for 10 minutes (no data counts), a run near its timeout.
    const alarms = alarmsOf(sweeperId);
    expect([...alarms.keys()].sort()).toEqual(['Duration', 'Errors', 'Invocations', 'Throttles']);
    expect(alarms.get('Invocations')).toMatchObject({
      ComparisonOperator: 'LessThanThreshold',
      Threshold: 1,
      EvaluationPeriods: ALARM_THRESHOLDS.scheduledMissedPeriods,
      TreatMissingData: 'breaching',
    });
    expect(alarms.get('Duration')).toMatchObject({
      Statistic: 'Maximum',
      Threshold: ((sweeper.Properties?.Timeout as number) * 1000 * ALARM_THRESHOLDS.scheduledDurationPercent) / 100,
    });
  });

  it('gives the commands table to the functions that use it, each with only the access it needs', () => {
    const [routesId, routes] = functionOf(commandCreate.entry);
    // Run, list, get and cancel: reads the device (advertised commands), reads and writes its commands.
    expect(grantsOf(stateless, routes)).toEqual({
      ...baseGrants(routesId),
      ...tableReads('devices'),
      ...tableReads('commands'),
      [tableId('commands')]: READ_WRITE,
    });
    const [statusId, status] = functionOf(deviceCommandStatusPost.entry);
    // A device's report: reads the device (its token), then one conditional update of the command, no read of it.
    expect(grantsOf(stateless, status)).toEqual({
      ...baseGrants(statusId),
      ...tableReads('devices'),
      [tableId('commands')]: WRITE,
    });
    // No other function touches the table: the pull lists pending commands and marks them DELIVERED, the deployment
    // changes consumer reads them into the desired state tag; a COMMAND rollout's worker and continuous consumer put
    // its commands and cancel them (conditional writes, no read), its targets listing reads their states; deleting a
    // device reads its pending commands and cancels them.
    const expected: Record<string, string[]> = {
      [commandCreate.entry]: READ_WRITE,
      [deviceCommandStatusPost.entry]: WRITE,
      [deviceDeploymentsGet.entry]: READ_WRITE,
      [DEPLOYMENT_CHANGES_ENTRY]: READ,
      [commandChanges.entry]: READ,
      [commandExpirySweeper.entry]: READ_WRITE,
      [ROLLOUT_WORKER.entry]: WRITE,
      [CONTINUOUS_ROLLOUTS_ENTRY]: WRITE,
      [rolloutTargets.entry]: READ,
      [deviceDelete.entry]: READ_WRITE,
    };
    for (const [entry, [, fn]] of ours) expect(grantsOf(stateless, fn)[tableId('commands')], entry).toEqual(expected[entry]);
  });
});
