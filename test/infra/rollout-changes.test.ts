/**
 * Rollout events on AWS: the rollouts table streams both images, and the rollout changes function reads that stream
 * through an event filter that lets only the rollout items' records reach it (not the tallies and reports written
 * once per device), publishes to the service's bus and touches no table. Built by lib/stage.ts exactly as bin/app.ts
 * builds them, with bundling skipped (template-helpers.ts).
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { rolloutChanges } from '../../functions/contract/functions.js';
import { baseGrants, grantsOf, type Resource, resourcesOf, type ServiceTemplates, serviceTemplates, tableId } from './template-helpers.js';

describe('rollout events on AWS', () => {
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

  it('streams both images of the rollouts table', () => {
    const [, table] = resourcesOf(stateful, 'AWS::DynamoDB::Table').find(([id]) => id.startsWith(tableId('rollouts'))) as [
      string,
      Resource,
    ];
    expect(table.Properties?.StreamSpecification).toEqual({ StreamViewType: 'NEW_AND_OLD_IMAGES' });
  });

  it('reads the rollouts stream from its start, filtered to the rollout items, retrying until the records near expiry', () => {
    const [functionId, fn] = functionOf(rolloutChanges.entry);
    const mappings = resourcesOf(stateless, 'AWS::Lambda::EventSourceMapping').filter(
      ([, mapping]) => JSON.stringify(mapping.Properties?.FunctionName) === JSON.stringify({ Ref: functionId }),
    );
    expect(mappings).toHaveLength(1);
    const [, mapping] = mappings[0] as [string, Resource];
    expect(mapping.Properties).toMatchObject({
      EventSourceArn: { 'Fn::ImportValue': expect.stringMatching(/RolloutsTable[0-9A-F]{8}StreamArn/) },
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 100,
      MaximumRetryAttempts: -1,
      MaximumRecordAgeInSeconds: 23 * 3600,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    // Tallies, reports, target chunks and deletions never invoke it.
    const filters = (mapping.Properties?.FilterCriteria as { Filters: { Pattern: string }[] }).Filters;
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
      { dynamodb: { NewImage: { pk: { S: [{ prefix: 'ROLLOUT#' }] } } } },
    ]);
    // Its events go to the service's bus, whose name it is given.
    const variables = (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(variables.EVENT_BUS_NAME).toEqual({ Ref: expect.stringMatching(/^DeploymentEvents[0-9A-F]{8}$/) });
  });

  it('lets the rollout changes function read its stream and publish events, nothing else', () => {
    const [functionId, fn] = functionOf(rolloutChanges.entry);
    const grants = grantsOf(stateless, fn);
    const stream = Object.keys(grants).find((name) => /RolloutsTable[0-9A-F]{8}StreamArn/.test(name)) as string;
    expect(grants).toEqual({
      ...baseGrants(functionId),
      '*': ['dynamodb:ListStreams', 'xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
      [stream]: ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'],
      RolloutChangesDeadLetterQueue: ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'],
      DeploymentEvents: ['events:PutEvents'],
    });
  });
});
