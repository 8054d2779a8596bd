/**
 * Webhook delivery on AWS: an EventBridge rule on the service's bus sends the event types webhooks carry to a queue
 * (with a dead-letter queue) feeding the fan-out; the webhooks table's stream, filtered to delivery items, feeds the
 * deliveries function; a schedule runs the retry sweeper every minute. Built by lib/stage.ts exactly as bin/app.ts
 * builds them, with bundling skipped (template-helpers.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { EVENT_SOURCE } from '../../functions/adapters/aws/eventbridge-event-publisher.js';
import { webhookDeliveries, webhookFanout, webhookRetrySweeper } from '../../functions/contract/functions.js';
import { WEBHOOK_SOURCE_EVENT_TYPES } from '../../functions/core/webhooks/events.js';
import { type Resource, resourcesOf, type ServiceTemplates, serviceTemplates } from './template-helpers.js';

describe('webhook delivery on AWS', () => {
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];

  beforeAll(() => {
    ({ stateless, ours } = serviceTemplates());
  });

  const functionOf = (entry: string): [string, Resource] => {
    const found = ours.get(entry);
    expect(found, entry).toBeDefined();
    return found as [string, Resource];
  };
  const mappingsOf = (functionId: string) =>
    resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties?.FunctionName) === JSON.stringify({ Ref: functionId }),
    );

  it("routes the bus's webhook source events through a rule to a queue with a dead-letter queue, feeding the fan-out", () => {
    const rules = resourcesOf(stateless, 'AWS::Events::Rule').filter(([id]) => id.startsWith('WebhookFanoutRule'));
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0] as [string, Resource];
    expect(rule.Properties).toMatchObject({
      EventBusName: { Ref: expect.stringMatching(/^DeploymentEvents[0-9A-F]{8}$/) },
      EventPattern: { source: [EVENT_SOURCE], 'detail-type': [...WEBHOOK_SOURCE_EVENT_TYPES] },
      Targets: [
        expect.objectContaining({
          Arn: { 'Fn::GetAtt': [expect.stringMatching(/^WebhookEventsQueue/), 'Arn'] },
          DeadLetterConfig: { Arn: { 'Fn::GetAtt': [expect.stringMatching(/^WebhookEventsDeadLetterQueue/), 'Arn'] } },
        }),
      ],
    });
    const [, queue] = resourcesOf(stateless, 'AWS::SQS::Queue').find(([id]) => id.startsWith('WebhookEventsQueue')) as [string, Resource];
    expect(queue.Properties).toMatchObject({
      SqsManagedSseEnabled: true,
      VisibilityTimeout: 6 * (webhookFanout.access.timeoutSeconds ?? 0),
      MessageRetentionPeriod: webhookFanout.trigger.retentionDays * 86_400,
      RedrivePolicy: { maxReceiveCount: webhookFanout.trigger.maxReceiveCount },
    });
    const [functionId] = functionOf(webhookFanout.entry);
    const mappings = mappingsOf(functionId);
    expect(mappings).toHaveLength(1);
    expect(mappings[0]?.[1].Properties).toMatchObject({
      EventSourceArn: { 'Fn::GetAtt': [expect.stringMatching(/^WebhookEventsQueue/), 'Arn'] },
      BatchSize: webhookFanout.trigger.batchSize,
      ScalingConfig: { MaximumConcurrency: webhookFanout.trigger.maxConcurrency },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it("feeds the deliveries function the webhooks table's delivery items only, from the stream's start", () => {
    const [functionId] = functionOf(webhookDeliveries.entry);
    const mappings = mappingsOf(functionId);
    expect(mappings).toHaveLength(1);
    const [, mapping] = mappings[0] as [string, Resource];
    expect(mapping.Properties).toMatchObject({
      EventSourceArn: { 'Fn::ImportValue': expect.stringMatching(/WebhooksTable[0-9A-F]{8}StreamArn/) },
      StartingPosition: 'TRIM_HORIZON',
      MaximumRetryAttempts: -1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const filters = (mapping.Properties?.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
      { dynamodb: { NewImage: { pk: { S: [{ prefix: 'DELIVERY#' }] } } } },
    ]);
  });

  it('runs the retry sweeper every minute, within the minute', () => {
    const [functionId, fn] = functionOf(webhookRetrySweeper.entry);
    const schedules = resourcesOf(stateless, 'AWS::Scheduler::Schedule').filter(([id]) => id.startsWith('WebhookRetrySweeperSchedule'));
    expect(schedules).toHaveLength(1);
    expect(schedules[0]?.[1].Properties).toMatchObject({
      ScheduleExpression: 'rate(1 minute)',
      Target: { Arn: { 'Fn::GetAtt': [functionId, 'Arn'] } },
    });
    expect(fn.Properties?.Timeout).toBeLessThan(60);
  });

  it('gives the senders no http host on AWS, and the settings of none of the other webhook variables', () => {
    for (const entry of [webhookDeliveries.entry, webhookRetrySweeper.entry]) {
      const [, fn] = functionOf(entry);
      const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(variables.WEBHOOK_ALLOWED_HTTP_HOSTS, entry).toBeUndefined();
      expect(variables.WEBHOOK_RETRY_DIVISOR, entry).toBeUndefined();
      expect(variables.WEBHOOKS_TABLE, entry).toBeDefined();
      expect(variables.AUDIT_TABLE, entry).toBeDefined();
    }
  });
});
