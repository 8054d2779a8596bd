/**
 * The rollout worker handler (functions/handlers/rollout-worker.ts) on its SQS event: a record whose body is not a
 * work message is acknowledged (logged, never delivered again), and a chunk that fails (here: DynamoDB refuses every
 * connection) is reported in `batchItemFailures`, alone, so that only its message comes back.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { freePort } from '../../../functions/local/free-port.js';
import { lambdaContext } from '../../support/lambda-context.js';

vi.hoisted(() => {
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
});

type Handler = (event: SQSEvent, context: unknown) => Promise<SQSBatchResponse>;
let handler: Handler;

beforeAll(async () => {
  // Nothing listens on this port: every DynamoDB call is refused.
  const deadPort = await freePort();
  Object.assign(process.env, {
    COMPANIES_TABLE: 'companies',
    DEVICES_TABLE: 'devices',
    SCENARIOS_TABLE: 'scenarios',
    DEPLOYMENTS_TABLE: 'deployments',
    PRESENCE_TABLE: 'presence',
    ROLLOUTS_TABLE: 'rollouts',
    COMMANDS_TABLE: 'commands',
    WEBHOOKS_TABLE: 'webhooks',
    ALERTS_TABLE: 'alerts',
    API_CLIENTS_TABLE: 'api-clients',
    ARCHIVE_BUCKET: 'archives',
    DYNAMODB_ENDPOINT: `http://127.0.0.1:${deadPort}`,
    S3_ENDPOINT: `http://127.0.0.1:${deadPort}`,
    AWS_REGION: 'us-east-1',
  });
  handler = (await import('../../../functions/handlers/rollout-worker.js')).handler as unknown as Handler;
});

const record = (messageId: string, body: string): SQSRecord => ({
  messageId,
  receiptHandle: messageId,
  body,
  attributes: { ApproximateReceiveCount: '1', SentTimestamp: '0', SenderId: 'test', ApproximateFirstReceiveTimestamp: '0' },
  messageAttributes: {},
  md5OfBody: '',
  eventSource: 'aws:sqs',
  eventSourceARN: 'arn:aws:sqs:us-east-1:123456789012:rollouts',
  awsRegion: 'us-east-1',
});

describe('rollout worker handler', () => {
  it('acknowledges malformed messages and reports the chunk that failed, alone', async () => {
    const valid = JSON.stringify({ type: 'RolloutChunk', company: 'acme', rolloutId: '01J0000000000000000000000A', wave: 0, chunk: 3 });
    const response = await handler(
      {
        Records: [
          record('not-json', '{oops'),
          record('wrong-shape', JSON.stringify({ type: 'RolloutChunk', company: 'acme', wave: -1 })),
          record('backend-down', valid),
        ],
      },
      lambdaContext(),
    );
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'backend-down' }] });
  }, 30_000);
});
