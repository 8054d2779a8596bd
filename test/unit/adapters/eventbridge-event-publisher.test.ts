/**
 * The EventBridge publisher (functions/adapters/aws/eventbridge-event-publisher.ts) when PutEvents refuses some
 * entries: those, and only those, are sent once more; entries still refused then fail the call. And what an
 * administrative change looks like on the bus. Simulated with aws-sdk-client-mock.
 */
import { EventBridgeClient, PutEventsCommand, type PutEventsRequestEntry } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENT_SOURCE, EventBridgeEventPublisher } from '../../../functions/adapters/aws/eventbridge-event-publisher.js';
import { administrativeChangeOf } from '../../../functions/core/audit/changes.js';
import type { DeploymentChangedEvent } from '../../../functions/core/deployments/model.js';

const client = new EventBridgeClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const mock = mockClient(client);
afterEach(() => mock.reset());

const event = (index: number): DeploymentChangedEvent => ({
  type: 'DeploymentChanged',
  company: 'acme',
  deploymentId: `01J${String(index).padStart(23, '0')}`,
  action: 'DEPLOY',
  deviceId: `acme-kiosk-${index}`,
  scenarioId: 'acme-welcome',
  version: '1.0.0',
  at: '2026-11-22T10:00:00.000Z',
  by: 'alice',
  note: null,
});
const idOf = (entry: PutEventsRequestEntry) => (JSON.parse(entry.Detail ?? '{}') as DeploymentChangedEvent).deploymentId;

describe('EventBridge publisher', () => {
  it('sends the refused entries once more, and only those', async () => {
    let calls = 0;
    mock.on(PutEventsCommand).callsFake((input: { Entries: PutEventsRequestEntry[] }) => {
      calls += 1;
      // The first call refuses the second entry (throttled); the retry accepts it.
      return Promise.resolve({
        Entries: input.Entries.map((_, index) => (calls === 1 && index === 1 ? { ErrorCode: 'ThrottlingException' } : { EventId: 'e' })),
      });
    });
    await new EventBridgeEventPublisher(client, 'bus').publish([event(1), event(2), event(3)]);
    const sent = mock.commandCalls(PutEventsCommand).map((call) => (call.args[0].input.Entries ?? []).map(idOf));
    expect(sent).toEqual([[event(1), event(2), event(3)].map((each) => each.deploymentId), [event(2).deploymentId]]);
  });

  it('fails naming how many events stayed refused after the retry', async () => {
    mock.on(PutEventsCommand).callsFake((input: { Entries: PutEventsRequestEntry[] }) =>
      Promise.resolve({
        Entries: input.Entries.map((entry) =>
          idOf(entry) === event(2).deploymentId ? { ErrorCode: 'InternalFailure' } : { EventId: 'e' },
        ),
      }),
    );
    await expect(new EventBridgeEventPublisher(client, 'bus').publish([event(1), event(2), event(3)])).rejects.toThrow(
      'EventBridge refused 1 of 3 events.',
    );
    expect(mock.commandCalls(PutEventsCommand)).toHaveLength(2);
  });

  it('publishes an administrative change under its own detail type, at the time of the change, the entry as detail', async () => {
    mock.on(PutEventsCommand).resolves({ Entries: [{ EventId: 'e' }] });
    const change = administrativeChangeOf({
      id: '01J00000000000000000000001',
      at: '2026-11-27T13:00:00.000Z',
      actor: 'root',
      action: 'company.updated',
      target: { kind: 'company', id: 'initech' },
      companies: ['initech'],
      before: { id: 'initech', name: 'Initech', quotaBytes: 1 },
      after: { id: 'initech', name: 'Initech', quotaBytes: 2 },
    });
    await new EventBridgeEventPublisher(client, 'bus').publish([change]);
    const [entry] = mock.commandCalls(PutEventsCommand)[0]?.args[0].input.Entries ?? [];
    expect(entry).toMatchObject({
      EventBusName: 'bus',
      Source: EVENT_SOURCE,
      DetailType: 'AdministrativeChange',
      Time: new Date(change.at),
    });
    expect(JSON.parse(entry?.Detail ?? '{}')).toEqual(change);
  });
});
