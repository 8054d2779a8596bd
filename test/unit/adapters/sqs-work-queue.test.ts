/**
 * The SQS work queue (functions/adapters/aws/sqs-work-queue.ts): messages go out in SendMessageBatch calls of 10; the
 * entries SQS reports failed are sent again, and only those; entries refused as the sender's fault fail the call.
 * Simulated with aws-sdk-client-mock.
 */
import { SendMessageBatchCommand, type SendMessageBatchRequestEntry, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { SqsWorkQueue } from '../../../functions/adapters/aws/sqs-work-queue.js';
import type { RolloutWorkMessage } from '../../../functions/core/rollouts/model.js';

const client = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const mock = mockClient(client);
afterEach(() => mock.reset());

const QUEUE_URL = 'https://sqs.us-east-1.amazonaws.com/123456789012/rollouts';
const message = (chunk: number): RolloutWorkMessage => ({
  type: 'RolloutChunk',
  company: 'acme',
  rolloutId: '01J0000000000000000000000A',
  wave: 0,
  chunk,
});
const chunksOf = (entries: SendMessageBatchRequestEntry[] | undefined) =>
  (entries ?? []).map((entry) => (JSON.parse(entry.MessageBody ?? '{}') as RolloutWorkMessage).chunk);
const messages = (count: number) => Array.from({ length: count }, (_, index) => message(index));

describe('SQS work queue', () => {
  it('sends the messages as JSON bodies in batches of 10 to the queue', async () => {
    mock.on(SendMessageBatchCommand).resolves({ Successful: [], Failed: [] });
    await new SqsWorkQueue(client, QUEUE_URL).send(messages(25));
    const calls = mock.commandCalls(SendMessageBatchCommand).map((call) => call.args[0].input);
    expect(calls.map((input) => input.QueueUrl)).toEqual([QUEUE_URL, QUEUE_URL, QUEUE_URL]);
    expect(calls.flatMap((input) => chunksOf(input.Entries)).sort((a, b) => a - b)).toEqual(messages(25).map((each) => each.chunk));
    expect(calls.map((input) => input.Entries?.length).sort()).toEqual([10, 10, 5]);
    expect(JSON.parse(calls[0]?.Entries?.[0]?.MessageBody ?? '')).toEqual(message(0));
  });

  it('sends again the entries a call reported failed, and only those', async () => {
    let calls = 0;
    mock.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) => {
      calls += 1;
      const failed = calls === 1 ? input.Entries.filter((_, index) => index === 3 || index === 7) : [];
      return Promise.resolve({
        Failed: failed.map((entry) => ({ Id: entry.Id, Code: 'InternalError', SenderFault: false, Message: 'try again' })),
        Successful: [],
      });
    });
    await new SqsWorkQueue(client, QUEUE_URL).send(messages(10));
    const sent = mock.commandCalls(SendMessageBatchCommand).map((call) => chunksOf(call.args[0].input.Entries));
    expect(sent).toEqual([messages(10).map((each) => each.chunk), [3, 7]]);
  });

  it("fails naming how many messages were not sent when SQS refuses them as the sender's fault, without retrying", async () => {
    mock.on(SendMessageBatchCommand).callsFake((input: { Entries: SendMessageBatchRequestEntry[] }) =>
      Promise.resolve({
        Failed: [{ Id: input.Entries[0]?.Id, Code: 'InvalidMessageContents', SenderFault: true, Message: 'bad' }],
        Successful: [],
      }),
    );
    await expect(new SqsWorkQueue(client, QUEUE_URL).send(messages(12))).rejects.toThrow(
      /2 of 12 rollout work messages not sent \(SQS refused 1 messages, e.g. InvalidMessageContents: bad\.\)/,
    );
    expect(mock.commandCalls(SendMessageBatchCommand)).toHaveLength(2);
  });
});
