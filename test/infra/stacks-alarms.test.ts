/**
 * The alarms of the stateless stack, all to one topic. Built by lib/stage.ts exactly as bin/app.ts builds them, with
 * bundling skipped (template-helpers.ts).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADMINISTRATIVE_CHANGES_ENTRY,
  alertChanges,
  bearerAuthorizer,
  CONTINUOUS_ROLLOUTS_ENTRY,
  commandChanges,
  DEPLOYMENT_CHANGES_ENTRY,
  preTokenGeneration,
  rolloutChanges,
  SEARCH_INDEXER_ENTRY,
  webhookDeliveries,
} from '../../functions/contract/functions.js';
import { ALARM_THRESHOLDS } from '../../lib/monitoring.js';
import { type Resource, resourcesOf, type ServiceTemplates, serviceTemplates } from './template-helpers.js';

describe('stacks, alarms (bundling skipped)', () => {
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];
  let statefulFunctions: ServiceTemplates['statefulFunctions'];

  beforeAll(() => {
    ({ stateless, ours, statefulFunctions } = serviceTemplates());
  });

  it('alarms on 5xx rate per API, errors and throttles per function, dead letters and the indexer lag, all to the alarm topic', () => {
    const alarms = resourcesOf(stateless, 'AWS::CloudWatch::Alarm');
    const [topicId] = resourcesOf(stateless, 'AWS::SNS::Topic')[0] as [string, Resource];
    for (const [id, alarm] of alarms) expect(alarm.Properties?.AlarmActions, id).toEqual([{ Ref: topicId }]);
    const byMetric = (name: string) => alarms.filter(([, alarm]) => alarm.Properties?.MetricName === name);
    for (const [entry, [functionId]] of ours) {
      // The authorizer's errors less its refusals: below.
      for (const metric of entry === bearerAuthorizer.entry ? ['Throttles'] : ['Errors', 'Throttles']) {
        const found = byMetric(metric).filter(
          ([, alarm]) =>
            JSON.stringify(alarm.Properties?.Dimensions) === JSON.stringify([{ Name: 'FunctionName', Value: { Ref: functionId } }]),
        );
        expect(found, `${metric} ${entry}`).toHaveLength(1);
        expect(found[0]?.[1].Properties).toMatchObject({
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          Period: 300,
          Statistic: 'Sum',
        });
      }
    }
    // The bearer authorizer throws to refuse a token (API Gateway's only way to answer 401), so its errors alarm counts
    // the failures it publishes itself (AuthorizerFailures), not its Lambda errors: bad tokens page nobody.
    const authorizerErrors = alarms.filter(([, alarm]) => alarm.Properties?.MetricName === 'AuthorizerFailures');
    expect(authorizerErrors, 'authorizer failures').toHaveLength(1);
    expect(authorizerErrors[0]?.[1].Properties).toMatchObject({
      Namespace: 'DeviceScenarioService',
      Dimensions: [{ Name: 'service', Value: 'device-scenario-service' }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    const [triggerId] = statefulFunctions.get(preTokenGeneration.entry) as [string, Resource];
    expect(
      byMetric('Errors').filter(([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions).includes(triggerId)),
      'trigger errors',
    ).toHaveLength(1);
    // Every queue but the rollout queue and the webhook events queue is a dead-letter queue (those two queues' age is
    // alarmed instead).
    const deadLetters = byMetric('ApproximateNumberOfMessagesVisible');
    expect(deadLetters.map(([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions)).sort()).toEqual(
      resourcesOf(stateless, 'AWS::SQS::Queue')
        .filter(([queueId]) => !queueId.startsWith('RolloutWorkQueue') && !queueId.startsWith('WebhookEventsQueue'))
        .map(([queueId]) => JSON.stringify([{ Name: 'QueueName', Value: { 'Fn::GetAtt': [queueId, 'QueueName'] } }]))
        .sort(),
    );
    for (const [id, alarm] of deadLetters)
      expect(alarm.Properties, id).toMatchObject({ Threshold: 0, ComparisonOperator: 'GreaterThanThreshold' });
    const iteratorAges = byMetric('IteratorAge');
    expect(iteratorAges.map(([, alarm]) => JSON.stringify(alarm.Properties?.Dimensions)).sort()).toEqual(
      [
        SEARCH_INDEXER_ENTRY,
        DEPLOYMENT_CHANGES_ENTRY,
        CONTINUOUS_ROLLOUTS_ENTRY,
        ADMINISTRATIVE_CHANGES_ENTRY,
        commandChanges.entry,
        rolloutChanges.entry,
        alertChanges.entry,
        webhookDeliveries.entry,
      ]
        .map((entry) => JSON.stringify([{ Name: 'FunctionName', Value: { Ref: ours.get(entry)?.[0] } }]))
        .sort(),
    );
    for (const [id, alarm] of iteratorAges)
      expect(alarm.Properties, id).toMatchObject({ Threshold: ALARM_THRESHOLDS.iteratorAgeMs, Statistic: 'Maximum' });
    const rates = alarms.filter(([, alarm]) => alarm.Properties?.Metrics !== undefined);
    expect(rates).toHaveLength(3);
    for (const [id, alarm] of rates) {
      expect(alarm.Properties, id).toMatchObject({ Threshold: ALARM_THRESHOLDS.api5xxPercent, EvaluationPeriods: 3, DatapointsToAlarm: 2 });
      expect(JSON.stringify(alarm.Properties?.Metrics), id).toMatch(
        /"MetricName":"5xx".*"MetricName":"Count"|"MetricName":"Count".*"MetricName":"5xx"/,
      );
    }
    stateless.hasOutput('AlarmTopicArn', { Value: { Ref: topicId } });
  });

  it('has as many alarms as docs/aws.md and docs/operations.md say, whose cost they count', () => {
    const count = resourcesOf(stateless, 'AWS::CloudWatch::Alarm').length;
    const aws = readFileSync('docs/aws.md', 'utf8');
    expect(aws).toContain(`| ${count} CloudWatch alarms (0.10 USD each, 10 free) | ~${((count - 10) * 0.1).toFixed(1)} USD |`);
    expect(readFileSync('docs/operations.md', 'utf8')).toContain(`**Alarms** (${count} with the defaults)`);
  });
});
