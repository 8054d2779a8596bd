import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CursorCodec } from '../../../functions/adapters/aws/cursor-codec.js';
import { DynamoDbCommandRepository } from '../../../functions/adapters/aws/dynamodb-command-repository.js';
import type { Command } from '../../../functions/core/commands/model.js';
import { BadRequestError } from '../../../functions/core/shared/errors.js';
import { LOCAL_TABLES } from '../../../functions/local/runtime.js';
import { useLocalTables } from '../../support/local-tables.js';

const client = useLocalTables('dss-commands-');
const repository = () => new DynamoDbCommandRepository(client(), LOCAL_TABLES, new CursorCodec(() => randomBytes(32)));

const base: Command = {
  id: '01JCMD00000000000000000001',
  company: 'acme',
  deviceId: 'kiosk-1',
  hub: 'hub-1',
  device: 'printer-1',
  command: 'print-test-page',
  // Numbers DynamoDB could not store as numbers, an empty key: kept as sent.
  arguments: { big: 1e300, '': [null, 'é'] },
  state: 'QUEUED',
  created: '2026-12-06T08:00:00.000Z',
  updated: '2026-12-06T08:00:00.000Z',
  expiresAt: '2026-12-06T09:00:00.000Z',
  by: 'alice',
};
const command = (id: string, overrides: Partial<Command> = {}): Command => ({ ...base, id, ...overrides });

describe('DynamoDbCommandRepository on DynamoDB Local', () => {
  it('stores a command once, its arguments exact, and reads it back', async () => {
    const commands = repository();
    await commands.create(base);
    await expect(commands.create(base)).rejects.toThrow(/conditional/i);
    expect(await commands.get('acme', 'kiosk-1', base.id)).toEqual(base);
    expect(await commands.get('acme', 'kiosk-2', base.id)).toBeUndefined();
    expect(await commands.get('acme', 'kiosk-1', 'not-a-ulid')).toBeUndefined();
  });

  it('pages a device’s commands newest first, refusing a cursor of another device', async () => {
    const commands = repository();
    for (const suffix of ['2', '3', '4']) await commands.create(command(`01JCMD0000000000000000000${suffix}`, { deviceId: 'kiosk-list' }));
    const first = await commands.list('acme', 'kiosk-list', 2, undefined);
    expect(first.items.map((item) => item.id.at(-1))).toEqual(['4', '3']);
    const second = await commands.list('acme', 'kiosk-list', 2, first.nextCursor ?? undefined);
    expect(second).toMatchObject({ items: [{ id: '01JCMD00000000000000000002' }], nextCursor: null });
    await expect(commands.list('acme', 'kiosk-1', 2, first.nextCursor ?? undefined)).rejects.toBeInstanceOf(BadRequestError);
  });

  it('changes state conditionally: absent, changed, then final with the stored command, and leaves the sweep index when final', async () => {
    const commands = repository();
    const id = '01JCMD00000000000000000010';
    await commands.create(command(id, { deviceId: 'kiosk-t', expiresAt: '2026-12-06T08:00:10.000Z' }));
    const at = '2026-12-06T08:00:01.000Z';
    expect(await commands.transition('acme', 'kiosk-t', '01JCMD00000000000000000099', { from: ['QUEUED'], to: 'DELIVERED', at })).toEqual({
      outcome: 'absent',
    });
    expect(await commands.overdue('2026-12-06T08:00:10.000Z', 10)).toContainEqual({
      company: 'acme',
      deviceId: 'kiosk-t',
      commandId: id,
      expiresAt: '2026-12-06T08:00:10.000Z',
    });
    const delivered = await commands.transition('acme', 'kiosk-t', id, { from: ['QUEUED'], to: 'DELIVERED', at });
    expect(delivered).toMatchObject({ outcome: 'changed', command: { state: 'DELIVERED', updated: at } });
    expect((await commands.pending('acme', 'kiosk-t')).map((item) => item.state)).toEqual(['DELIVERED']);
    const late = await commands.transition('acme', 'kiosk-t', id, {
      from: ['QUEUED', 'DELIVERED'],
      to: 'SUCCEEDED',
      at: '2026-12-06T08:00:11.000Z',
      notExpiredAt: '2026-12-06T08:00:11.000Z',
    });
    expect(late).toMatchObject({ outcome: 'final', command: { state: 'DELIVERED', arguments: base.arguments } });
    const done = await commands.transition('acme', 'kiosk-t', id, {
      from: ['QUEUED', 'DELIVERED'],
      to: 'FAILED',
      at,
      result: { message: 'jam', output: { code: 7 } },
      notExpiredAt: at,
    });
    expect(done).toMatchObject({ outcome: 'changed', command: { state: 'FAILED', result: { message: 'jam', output: { code: 7 } } } });
    expect(await commands.pending('acme', 'kiosk-t')).toEqual([]);
    expect((await commands.overdue('2026-12-07T00:00:00.000Z', 100)).map((item) => item.commandId)).not.toContain(id);
  });
});
