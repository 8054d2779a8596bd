/**
 * The devices table item of a device: commands' free-form `payload` and `arguments` stored as JSON text and shown
 * as sent; items written before that encoding read as they are.
 */
import { describe, expect, it } from 'vitest';
import { deviceFromItem, deviceItem } from '../../../functions/adapters/aws/device-items.js';
import { searchDocumentFromItem } from '../../../functions/adapters/aws/search-documents.js';
import type { DeviceCommand, StoredDevice } from '../../../functions/core/devices/model.js';

const withCommands = (commands: DeviceCommand[]): StoredDevice => ({
  id: 'acme-kiosk-0001',
  company: 'acme',
  serial: 'ACM-0001',
  created: '2026-01-01T00:00:00.000Z',
  updated: '2026-01-01T00:00:00.000Z',
  connection: { state: 'CONNECTED', connectedSince: '2026-01-01T00:00:00.000Z' },
  credential: { id: 'cred', secretHash: 'hash', created: '2026-01-01T00:00:00.000Z' },
  health: {
    updated: '2026-01-01T00:00:00.000Z',
    versionCode: '1',
    versionName: '1.0',
    mode: 'SERVER',
    hubs: [
      {
        uid: 'hub',
        label: 'Hub',
        version: '1',
        registeredSince: '2026-01-01T00:00:00.000Z',
        type: 'STANDARD',
        devices: [
          {
            uid: 'printer',
            label: 'Printer',
            version: '1',
            health: { state: 'NOMINAL', message: 'Ready', messages: [] },
            capability: { type: 'PRINTER', modes: [] },
            commands,
          },
        ],
      },
    ],
  },
});

const command = (members: Partial<DeviceCommand>): DeviceCommand =>
  ({ command: 'reboot', title: 'Reboot', description: 'Restart it.', ...members }) as DeviceCommand;

describe('device items', () => {
  it('store payload and arguments as JSON text, so no legal JSON reaches DynamoDB as maps, and give them back as sent', () => {
    const payload = { '': [[[1e-200]]], big: 2 ** 60 };
    const device = withCommands([command({ payload, arguments: 'x' }), command({})]);
    const item = deviceItem(device);
    const [stored, bare] = (item.health as { hubs: { devices: { commands: Record<string, unknown>[] }[] }[] }).hubs[0]?.devices[0]
      ?.commands as Record<string, unknown>[];
    expect(stored).toEqual({ ...command({}), payloadJson: JSON.stringify(payload), argumentsJson: '"x"' });
    expect(bare).toEqual(command({}));
    expect(item).toMatchObject({ deviceId: device.id, entity: 'DEVICE', credential: device.credential });
    expect(deviceFromItem(item)).toEqual(device);
    expect(searchDocumentFromItem(item)).toMatchObject({ type: 'DEVICE', health: device.health });
  });

  it('read items written before the encoding (payload and arguments as maps) as they are', () => {
    const legacy = withCommands([command({ payload: { delay: 0 }, arguments: [] })]);
    const { health, ...rest } = legacy;
    const item = { ...rest, health, deviceId: legacy.id, entity: 'DEVICE' };
    expect(deviceFromItem(item)).toEqual(legacy);
    expect(searchDocumentFromItem(item)).toMatchObject({ health: legacy.health });
  });
});
