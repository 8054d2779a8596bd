/**
 * DynamoDB cancels a transaction with `TransactionConflict` when a concurrent transaction touches the same items
 * (real DynamoDB only; DynamoDB Local serializes). Simulated with aws-sdk-client-mock.
 */
import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { DynamoDbDeploymentRepository, DynamoDbScenarioRepository } from '../../functions/adapters/aws/dynamodb-repositories.js';
import type { ActiveDeployment, DeploymentHistoryEntry } from '../../functions/core/ports.js';

const tables = { companies: 'companies', devices: 'devices', scenarios: 'scenarios', deployments: 'deployments' };
const documentClient = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }));
const mock = mockClient(documentClient);
afterEach(() => mock.reset());

const cancelled = (...codes: string[]) =>
  new TransactionCanceledException({ message: 'Transaction cancelled', $metadata: {}, CancellationReasons: codes.map((Code) => ({ Code })) });

const deployment: ActiveDeployment = {
  id: '01JDEPLOY000000000000000000', company: 'acme', deviceId: 'acme-kiosk-0001', scenarioId: 'acme-welcome', version: '1.0.0',
  deployedAt: '2026-11-22T10:00:00.000Z', deployedBy: 'alice',
};
const history: DeploymentHistoryEntry = {
  id: deployment.id, company: 'acme', deviceId: deployment.deviceId, deviceSubId: null, targetType: 'DEVICE', whatType: 'SCENARIO',
  scenarioId: 'acme-welcome', version: '1.0.0', action: 'DEPLOY', state: 'SUCCESS', cause: null, at: deployment.deployedAt, by: 'alice',
};

describe('transaction conflicts on real DynamoDB', () => {
  it('retries a DEPLOY cancelled by a conflict and reports the real outcome', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).rejectsOnce(cancelled('TransactionConflict', 'None')).resolves({});
    const repository = new DynamoDbDeploymentRepository(documentClient, tables);
    expect(await repository.activate(deployment, history)).toBe('activated');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(3);
  });

  it('a retried DEPLOY that then meets the winner’s write is ALREADY_DEPLOYED, not an error', async () => {
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('TransactionConflict', 'None')).rejects(cancelled('ConditionalCheckFailed', 'None'));
    const repository = new DynamoDbDeploymentRepository(documentClient, tables);
    expect(await repository.activate(deployment, history)).toBe('already-active');
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });

  it('gives up after repeated conflicts, so the item is reported FAILURE / NONE and can be retried', async () => {
    mock.on(TransactWriteCommand).rejects(cancelled('TransactionConflict', 'None'));
    const repository = new DynamoDbDeploymentRepository(documentClient, tables);
    await expect(repository.activate(deployment, history)).rejects.toThrow(TransactionCanceledException);
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(8);
  });

  it('retries an upload whose quota charge conflicted with a concurrent upload', async () => {
    mock.on(GetCommand).resolves({ Item: { companyId: 'globex', quotaBytes: 5_242_880, usedBytes: 0 } });
    mock.on(TransactWriteCommand).rejectsOnce(cancelled('None', 'TransactionConflict', 'None')).resolves({});
    const repository = new DynamoDbScenarioRepository(documentClient, tables);
    const outcome = await repository.recordVersion({
      company: 'globex', scenarioId: 'globex-timetable', version: '2.0.0', name: 'Timetable', size: 1_000, sha256: 'a'.repeat(64),
      archiveKey: 'companies/globex/scenarios/globex-timetable/2.0.0/x.zip', uploadedBy: 'bob', created: '2026-11-22T10:00:00.000Z',
    });
    expect(outcome).toEqual({ kind: 'stored' });
    expect(mock.commandCalls(TransactWriteCommand)).toHaveLength(2);
  });
});
