/**
 * The health a simulated kiosk reports: a plausible one per device number, the drift a real kiosk's health shows over
 * time, and what the service adds to a health it stores.
 */

/** Drops what the service sets itself from a health read back from the device resource. */
export function stripServerFields(health: Record<string, unknown>): Record<string, unknown> {
  const { updated: _updated, ...rest } = health;
  return rest;
}

/**
 * The health a device set up again reports: the one it last reported (read back from its resource), unless that one
 * advertises no command (kept from before simulated kiosks advertised any), then a fresh simulatedHealth.
 */
export function resumedHealth(stored: Record<string, unknown>, index: number): Record<string, unknown> {
  const hubs = (stored.hubs ?? []) as { devices?: { commands?: unknown[] }[] }[];
  const advertises = hubs.some((hub) => (hub.devices ?? []).some((sub) => (sub.commands ?? []).length > 0));
  return advertises ? stripServerFields(stored) : simulatedHealth(index);
}

/** Nudges one battery level, as a real kiosk's health drifts. */
export function changeHealth(health: Record<string, unknown>): void {
  const hubs = health.hubs as { battery?: { health: { level: number } } }[] | undefined;
  const battery = hubs?.find((hub) => hub.battery !== undefined)?.battery;
  if (battery !== undefined) battery.health.level = Math.max(0, Math.min(100, Math.round(battery.health.level + (Math.random() * 10 - 5))));
  else health.versionName = `${String(health.versionName).replace(/\+.*$/, '')}+${Date.now() % 1000}`;
}

/** A command a sub-device advertises, as the demo's peripherals word it (functions/local/demo-peripherals.ts). */
const advertised = (command: string, title: string, description: string, payload: unknown = {}) => ({
  command,
  title,
  description,
  payload,
  arguments: [],
});
const REBOOT = advertised('reboot', 'Reboot', 'Restart the peripheral; it is unavailable for about a minute.');

/**
 * A plausible health for simulated device number `index`: one hub with a printer (advertising `reboot` and
 * `print-test-page`) and a payment terminal (`reboot` and `reconcile`).
 */
export function simulatedHealth(index: number): Record<string, unknown> {
  const subDevice = (uid: string, label: string, type: string, modes: string[], commands: unknown[]) => ({
    uid,
    label,
    version: '2.1.0',
    health: { state: 'NOMINAL', message: 'OK', messages: [] },
    capability: { type, modes },
    commands,
  });
  return {
    versionCode: `${40 + (index % 3)}`,
    versionName: `4.${index % 3}.0`,
    mode: index % 2 === 0 ? 'EMBEDDED_PLATFORM_ANDROID' : 'EMBEDDED_PLATFORM_COMPUTER',
    hubs: [
      {
        uid: `hub-${index}`,
        label: 'Main hub',
        version: '1.4.2',
        registeredSince: '2026-01-01T00:00:00Z',
        type: 'USB',
        battery: { health: { state: 'GOOD', plugged: 'AC', status: 'CHARGING', level: 50 + (index % 50), cycle: 10 + (index % 90) } },
        devices: [
          subDevice(
            `printer-${index}`,
            'Receipt printer',
            'PRINTER',
            ['PRINTER_PRINT'],
            [
              REBOOT,
              advertised('print-test-page', 'Print test page', 'Print a test receipt showing the printer status and settings.', {
                template: 'test-receipt',
              }),
            ],
          ),
          subDevice(
            `payment-${index}`,
            'Card terminal',
            'PAYMENT',
            ['PAYMENT_CARD_CONTACTLESS'],
            [REBOOT, advertised('reconcile', 'Reconcile', "Send the day's transactions to the acquirer and reset the totals.")],
          ),
        ],
      },
    ],
  };
}
