/**
 * DynamoDB cancels a transaction with `TransactionConflict` when a concurrent transaction touches the same items
 * (real DynamoDB only; DynamoDB Local serializes); and an upload racing a quota change (PATCH
 * /admin/companies/{companyId}) fails its quota charge, which is conditional on the quota read first: the archive is
 * then charged against the new quota, not refused with a 413 whose own figures say it fits. Simulated with
 * aws-sdk-client-mock (the races need a write between two calls).
 */
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbScenarioRepository } from '../../../functions/adapters/aws/dynamodb-scenario-repository.js';

const tables = {
  companies: 'companies',
  devices: 'devices',
  scenarios: 'scenarios',
  deployments: 'deployments',
  presence: 'presence',
  rollouts: 'rollouts',
  commands: 'commands',
};
const documentClient = DynamoDBDocumentClient.from(
  new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
);
const mock = mockClient(documentClient);
afterEach(() => mock.reset());

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({
    message: 'Transaction cancelled',
    $metadata: {},
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('transaction conflicts on real DynamoDB', () => {
  it('retries an upload whose quota charge conflicted with a concurrent upload', async () => {
    mock.on(GetCommand).resolves({ Item: { companyId: 'globex', quotaBytes: 5_242_880, usedBytes: 0 } });
    mock
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('None', 'TransactionConflict', 'None'))
      .resolves({});
    const repository = new DynamoDbScenarioRepository(documentClient, tables);
    const outcome = await repository.recordVersion({
      company: 'globex',
      scenarioId: 'globex-timetable',
      version: '2.0.0',
      name: 'Timetable',
      size: 1_000,
      sha256: 'a'.repeat(64),
      archiveKey: 'companies/globex/scenarios/globex-timetable/2.0.0/x.zip',
      uploadedBy: 'bob',
      created: '2026-11-22T10:00:00.000Z',
    });
    expect(outcome).toEqual({ kind: 'stored' });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('gives a conflict that never clears up after 8 attempts (a few seconds at most), with the error', async () => {
    mock.on(GetCommand).resolves({ Item: { companyId: 'globex', quotaBytes: 5_242_880, usedBytes: 0 } });
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'TransactionConflict', 'None'));
    const repository = new DynamoDbScenarioRepository(documentClient, tables);
    const started = performance.now();
    await expect(
      repository.recordVersion({
        company: 'globex',
        scenarioId: 'globex-timetable',
        version: '2.0.1',
        name: 'Timetable',
        size: 1_000,
        sha256: 'a'.repeat(64),
        archiveKey: 'companies/globex/scenarios/globex-timetable/2.0.1/x.zip',
        uploadedBy: 'bob',
        created: '2026-11-22T10:00:00.000Z',
      }),
    ).rejects.toBeInstanceOf(TransactionCanceledException);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(8);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

const version = {
  company: 'globex',
  scenarioId: 'globex-timetable',
  version: '2.0.0',
  name: 'Timetable',
  size: 1_000,
  sha256: 'a'.repeat(64),
  archiveKey: 'companies/globex/scenarios/globex-timetable/2.0.0/x.zip',
  uploadedBy: 'bob',
  created: '2026-11-22T10:00:00.000Z',
};

describe('an upload racing a quota change', () => {
  it('is charged against the new quota when the archive fits it', async () => {
    mock
      .on(GetCommand)
      .resolvesOnce({ Item: { companyId: 'globex', quotaBytes: 5_000, usedBytes: 0 } })
      .resolves({ Item: { companyId: 'globex', quotaBytes: 4_000, usedBytes: 0 } });
    mock
      .on(TransactWriteCommand)
      .rejectsOnce(cancelled('None', 'ConditionalCheckFailed', 'None'))
      .resolves({});
    const outcome = await new DynamoDbScenarioRepository(documentClient, tables).recordVersion(version);
    expect(outcome).toEqual({ kind: 'stored' });
    const charges = mock
      .commandCalls(TransactWriteCommand)
      .map((call) => call.args[0].input.TransactItems?.[1]?.Update?.ExpressionAttributeValues);
    expect(charges).toEqual([
      { ':size': 1_000, ':quota': 5_000, ':ceiling': 4_000 },
      { ':size': 1_000, ':quota': 4_000, ':ceiling': 3_000 },
    ]);
  });

  it('is refused with the current figures when the quota is unchanged (the archive does not fit)', async () => {
    mock.on(GetCommand).resolves({ Item: { companyId: 'globex', quotaBytes: 5_000, usedBytes: 4_500 } });
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed', 'None'));
    const outcome = await new DynamoDbScenarioRepository(documentClient, tables).recordVersion(version);
    expect(outcome).toEqual({ kind: 'quota-exceeded', quotaBytes: 5_000, usedBytes: 4_500 });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(1);
  });

  it('gives up after a few quota changes in a row, refusing with the figures it read last', async () => {
    let quota = 5_000;
    mock.on(GetCommand).callsFake(() => ({ Item: { companyId: 'globex', quotaBytes: (quota += 1), usedBytes: 0 } }));
    mock.on(TransactWriteCommand).rejects(cancelled('None', 'ConditionalCheckFailed', 'None'));
    const outcome = await new DynamoDbScenarioRepository(documentClient, tables).recordVersion(version);
    expect(outcome.kind).toBe('quota-exceeded');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(3);
  });
});
