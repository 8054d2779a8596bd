/**
 * Rollouts on AWS (docs/architecture.md, "Rollouts on AWS"): the rollout queue and its dead-letter queue, the worker
 * fed by it with bounded concurrency, the sweeper on a schedule, who may send to the queue (a fixture route with
 * `rolloutQueue` access is passed to the stack beside the service's routes, whatever rollout routes this branch defines), the least privilege of each
 * function touching the rollouts table, and the alarms.
 */

import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { ENV, readEnvironment } from '../../functions/contract/environment.js';
import { DEPLOYMENT_CHANGES_ENTRY, ROLLOUT_SWEEPER, ROLLOUT_WORKER, rolloutWorker } from '../../functions/contract/functions.js';
import type { RouteDefinition } from '../../functions/contract/route.js';
import { ROUTES } from '../../functions/contract/routes.js';
import { visibilityTimeoutOf } from '../../lib/constructs/event-functions.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import { ROLLOUT_CHUNK_TIMEOUT } from '../../lib/stateless-stack.js';
import {
  asArray,
  baseGrants,
  deniesInsecureTransport,
  functionsByEntry,
  grantsOf,
  indexesOf,
  quickStage,
  READ_WRITE,
  type Resource,
  resourcesOf,
  SERVICE,
  schedulesOf,
  statementsOf,
  tableId,
  tableReads,
  WRITE,
} from './template-helpers.js';

/** A route that may send rollout work, passed to the stack beside the service's own routes. */
const FIXTURE_ROUTE: RouteDefinition = {
  id: 'FixtureRolloutStart',
  api: 'main',
  method: 'POST',
  path: '/companies/{companyId}/fixture-rollouts',
  scope: 'deployments:write',
  companyParameter: 'companyId',
  entry: 'test/infra/fixtures/rollout-route.ts',
  access: { storage: true, tables: { rollouts: 'RW' }, rolloutQueue: true },
};

/** The routes the stack is built from: the service's, and the fixture. */
const ROUTES_WITH_FIXTURE = [...ROUTES, FIXTURE_ROUTE];

/** The worker's timeout and the queue's visibility timeout and redrive count, from the worker's definition. */
const ROLLOUT_WORKER_TIMEOUT_SECONDS = rolloutWorker.access.timeoutSeconds as number;
const ROLLOUT_QUEUE_VISIBILITY = visibilityTimeoutOf(rolloutWorker);
const ROLLOUT_MAX_RECEIVE_COUNT = rolloutWorker.trigger.maxReceiveCount;

/** What the consumer of an SQS event source is granted by aws-cdk-lib (its receive, delete and visibility calls). */
const CONSUME_ACTIONS = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];

describe('rollouts on AWS', () => {
  let stateless: Template;
  let ours: Map<string, [string, Resource]>;
  let queueId: string;
  let deadLetterQueueId: string;

  beforeAll(() => {
    ({ stateless } = quickStage({}, { ...SERVICE, routes: [...SERVICE.routes, FIXTURE_ROUTE] }));
    ours = functionsByEntry(stateless);
    const queues = resourcesOf(stateless, 'AWS::SQS::Queue');
    queueId = (queues.find(([id]) => id.startsWith('RolloutWorkQueue')) as [string, Resource])[0];
    deadLetterQueueId = (queues.find(([id]) => id.startsWith('RolloutWorkDeadLetterQueue')) as [string, Resource])[0];
  });

  const functionOf = (entry: string): [string, Resource] => {
    const found = ours.get(entry);
    expect(found, entry).toBeDefined();
    return found as [string, Resource];
  };
  const variablesOf = (entry: string) => (functionOf(entry)[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;

  it('queues work on an encrypted, TLS-only, unnamed queue whose messages stay invisible 6 times the worker timeout and move to a dead-letter queue after 5 receives', () => {
    const queues = new Map(resourcesOf(stateless, 'AWS::SQS::Queue'));
    const [, worker] = functionOf(ROLLOUT_WORKER.entry);
    expect(worker.Properties?.Timeout).toBe(ROLLOUT_WORKER_TIMEOUT_SECONDS);
    expect(queues.get(queueId)?.Properties).toEqual({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 6 * (worker.Properties?.Timeout as number),
      MessageRetentionPeriod: 4 * 24 * 3600,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterQueueId, 'Arn'] }, maxReceiveCount: 5 },
    });
    expect(ROLLOUT_MAX_RECEIVE_COUNT).toBe(5);
    // Operators purge the dead-letter queue by its URL (docs/operations.md, "On AWS").
    stateless.hasOutput('RolloutDeadLetterQueueUrl', { Value: { Ref: deadLetterQueueId } });
    expect(queues.get(deadLetterQueueId)?.Properties).toEqual({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
    for (const id of [queueId, deadLetterQueueId]) {
      const policies = resourcesOf(stateless, 'AWS::SQS::QueuePolicy').filter(([, policy]) =>
        JSON.stringify(policy.Properties?.Queues).includes(id),
      );
      expect(policies, id).toHaveLength(1);
      expect(deniesInsecureTransport((policies[0] as [string, Resource])[1].Properties?.PolicyDocument), id).toBe(true);
    }
  });

  it('feeds the worker one chunk per invocation, at most ROLLOUT_WORKER.maxConcurrency at once, a failed message retried alone', () => {
    const [workerId] = functionOf(ROLLOUT_WORKER.entry);
    const mappings = resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties?.FunctionName) === JSON.stringify({ Ref: workerId }),
    );
    expect(mappings).toHaveLength(1);
    expect((mappings[0] as [string, Resource])[1].Properties).toEqual({
      FunctionName: { Ref: workerId },
      EventSourceArn: { 'Fn::GetAtt': [queueId, 'Arn'] },
      BatchSize: ROLLOUT_WORKER.batchSize,
      ScalingConfig: { MaximumConcurrency: ROLLOUT_WORKER.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // The bound that keeps a 100,000-device rollout from taking the account's concurrency (Lambda allows 2 to 1,000).
    expect(ROLLOUT_WORKER.maxConcurrency).toBeGreaterThanOrEqual(2);
    expect(ROLLOUT_WORKER.maxConcurrency).toBeLessThanOrEqual(10);
  });

  it("grants the worker a deployment's tables, the rollouts table and its sweep index, writing commands, and consuming the queue, not sending to it", () => {
    const [workerId, worker] = functionOf(ROLLOUT_WORKER.entry);
    expect(grantsOf(stateless, worker)).toEqual({
      ...baseGrants(workerId),
      ...tableReads('devices'),
      ...tableReads('scenarios'),
      ...tableReads('deployments'),
      ...tableReads('rollouts'),
      [tableId('deployments')]: READ_WRITE,
      [tableId('rollouts')]: READ_WRITE,
      // A COMMAND rollout's chunk puts its commands, and a cancel's work cancels them: conditional writes, no read.
      [tableId('commands')]: WRITE,
      RolloutWorkQueue: CONSUME_ACTIONS,
    });
    expect(indexesOf('rollouts')).toEqual(['sweep', 'continuous']);
  });

  it('runs the sweeper every minute from EventBridge Scheduler, with the rollouts table, its sweep index and sqs:SendMessage on the queue only', () => {
    const [sweeperId, sweeper] = functionOf(ROLLOUT_SWEEPER.entry);
    const schedules = schedulesOf(stateless, sweeperId);
    expect(schedules).toHaveLength(1);
    const [, schedule] = schedules[0] as [string, Resource];
    expect(schedule.Properties).toMatchObject({
      ScheduleExpression: `rate(${ROLLOUT_SWEEPER.everyMinutes} minute)`,
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
    expect(schedule.Properties?.Name).toBeUndefined();
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
    expect(sweeper.Properties?.Timeout).toBeLessThan(60 * ROLLOUT_SWEEPER.everyMinutes);
    expect(grantsOf(stateless, sweeper)).toEqual({
      ...baseGrants(sweeperId),
      ...tableReads('rollouts'),
      [tableId('rollouts')]: READ_WRITE,
      RolloutWorkQueue: ['sqs:SendMessage'],
    });
  });

  it('gives the queue URL and the chunk timeout to the functions that send rollout work and to the worker, and sqs:SendMessage only to the senders', () => {
    const senders = new Set([
      ROLLOUT_SWEEPER.entry,
      ...ROUTES_WITH_FIXTURE.filter((route) => route.access?.rolloutQueue === true).map((route) => route.entry),
    ]);
    expect(senders).toContain(FIXTURE_ROUTE.entry);
    for (const [entry, [, fn]] of ours) {
      const variables = variablesOf(entry);
      // (Stream consumers also send their failures to their own dead-letter queues.)
      expect(grantsOf(stateless, fn).RolloutWorkQueue, entry).toEqual(
        senders.has(entry) ? ['sqs:SendMessage'] : entry === ROLLOUT_WORKER.entry ? CONSUME_ACTIONS : undefined,
      );
      if (senders.has(entry) || entry === ROLLOUT_WORKER.entry) {
        expect(variables[ENV.rolloutQueueUrl], entry).toEqual({ Ref: queueId });
        expect(variables[ENV.rolloutChunkTimeoutSeconds], entry).toBe(String(ROLLOUT_CHUNK_TIMEOUT.toSeconds()));
      } else {
        expect(variables[ENV.rolloutQueueUrl], entry).toBeUndefined();
        expect(variables[ENV.rolloutChunkTimeoutSeconds], entry).toBeUndefined();
      }
    }
    // The fixture route's function: its declared table, and sending.
    const [fixtureId, fixture] = functionOf(FIXTURE_ROUTE.entry);
    expect(grantsOf(stateless, fixture)).toEqual({
      ...baseGrants(fixtureId),
      ...tableReads('rollouts'),
      [tableId('rollouts')]: READ_WRITE,
      RolloutWorkQueue: ['sqs:SendMessage'],
    });
    // A chunk SQS still redelivers by itself (invisible for the visibility timeout) is not sent again by the sweeper.
    expect(ROLLOUT_CHUNK_TIMEOUT.toSeconds()).toBeGreaterThanOrEqual(ROLLOUT_QUEUE_VISIBILITY.toSeconds());
    expect(() =>
      readEnvironment('rollouts', {
        [ENV.rolloutQueueUrl]:
          'https://sqs.eu-west-1.amazonaws.com/123456789012/DeviceScenarioService-test-Stateless-RolloutWorkQueue-AbC123',
        [ENV.rolloutChunkTimeoutSeconds]: variablesOf(ROLLOUT_SWEEPER.entry)[ENV.rolloutChunkTimeoutSeconds] as string,
      }),
    ).not.toThrow();
  });

  it('lets the deployments stream consumer count device reports in the rollouts table with writes only (Put and Update of one transaction)', () => {
    const [, changes] = functionOf(DEPLOYMENT_CHANGES_ENTRY);
    const grants = grantsOf(stateless, changes);
    // IAM checks each action of a TransactWriteItems as its own operation: a conditional Put and an Update need
    // PutItem and UpdateItem (ConditionCheckItem only for a ConditionCheck action).
    expect(grants[tableId('rollouts')]).toEqual(WRITE);
    expect(grants[tableId('rollouts')]).toEqual(expect.arrayContaining(['dynamodb:PutItem', 'dynamodb:UpdateItem']));
    expect(Object.keys(grants).filter((name) => /Rollout/.test(name))).toEqual([tableId('rollouts')]);
  });

  it('alarms on dead letters of the rollout queue, its oldest message past 15 minutes, worker errors and a sweeper not run for 10 minutes', () => {
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm');
    const [topicId] = resourcesOf(stateless, 'AWS::SNS::Topic')[0] as [string, Resource];
    const on = (metric: string, dimension: unknown) =>
      alarms
        .filter(
          ([, alarm]) =>
            alarm.Properties?.MetricName === metric && JSON.stringify(alarm.Properties?.Dimensions).includes(JSON.stringify(dimension)),
        )
        .map(([, alarm]) => alarm.Properties as Record<string, unknown>);
    const queueName = (id: string) => ({ Name: 'QueueName', Value: { 'Fn::GetAtt': [id, 'QueueName'] } });
    const [workerId] = functionOf(ROLLOUT_WORKER.entry);
    const [sweeperId, sweeper] = functionOf(ROLLOUT_SWEEPER.entry);
    const functionName = (id: string) => ({ Name: 'FunctionName', Value: { Ref: id } });
    const expected = [
      [
        on('ApproximateNumberOfMessagesVisible', queueName(deadLetterQueueId)),
        { Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' },
      ],
      [
        on('ApproximateAgeOfOldestMessage', queueName(queueId)),
        { Threshold: 15 * 60, ComparisonOperator: 'GreaterThanThreshold', Statistic: 'Maximum', Namespace: 'AWS/SQS' },
      ],
      [on('Errors', functionName(workerId)), { Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Statistic: 'Sum' }],
      [on('Errors', functionName(sweeperId)), { Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold' }],
      [
        on('Invocations', functionName(sweeperId)),
        {
          Threshold: 1,
          ComparisonOperator: 'LessThanThreshold',
          EvaluationPeriods: ALARM_THRESHOLDS.scheduledMissedPeriods,
          Period: 300,
          TreatMissingData: 'breaching',
        },
      ],
      [
        on('Duration', functionName(sweeperId)),
        { Threshold: ((sweeper.Properties?.Timeout as number) * 1000 * ALARM_THRESHOLDS.scheduledDurationPercent) / 100 },
      ],
    ] as const;
    for (const [found, properties] of expected) {
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({ ...properties, AlarmActions: [{ Ref: topicId }] });
    }
    expect(ALARM_THRESHOLDS.workQueueAgeSeconds).toBe(ROLLOUT_CHUNK_TIMEOUT.toSeconds());
    // The rollout queue itself is not a dead-letter queue: messages waiting there are normal.
    expect(on('ApproximateNumberOfMessagesVisible', queueName(queueId))).toEqual([]);
  });
});
