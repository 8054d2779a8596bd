/**
 * `dss command run|list|get|cancel`: the CLI (bin/dss.mjs, as a child process) against a small service on 127.0.0.1
 * that answers as the commands routes do. What the operator sees: the body sent, the id and state printed, a --wait
 * that shows each change and exits 1 on a FAILED end, the usage errors of bad durations and JSON (nothing sent), a
 * refused command explained with what the sub-device advertises, listings page by page, and the kiosk's texts shown
 * visibly while --json stays exact. The pure parts (durations, the backoff, the wait) are tested in-process.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { durationSeconds, expiresInArgument, jsonArgument } from '../../../cli/command-arguments.js';
import {
  type DeviceCommand,
  FIRST_POLL_DELAY_MS,
  MAX_FAILED_READS,
  MAX_POLL_DELAY_MS,
  nextPollDelay,
  waitForFinal,
} from '../../../cli/command-wait.js';
import { ApiError } from '../../../client/index.js';
import { type DssRun, runDss } from '../../e2e/cli-runner.js';

const DEVICE_PATH = '/companies/acme/resources/devices/kiosk-1';
const SUCCEEDS = '01JD2X3Y4Z5A6B7C8D9E0F1G2H';
const FAILS = '01JD2X3Y4Z5A6B7C8D9E0F1G2J';
/** What a kiosk reported with FAILED: a line feed and an escape sequence that would act on the terminal. */
const HOSTILE = 'Paper out\n\u001b[2Jcheck the roll \u202Egnp.exe\u202C';

const command = (overrides: Partial<DeviceCommand> = {}): DeviceCommand => ({
  id: SUCCEEDS,
  target: { type: 'DEVICE', id: 'kiosk-1', subId: 'hub-1/printer-1' },
  command: 'print-test-page',
  arguments: null,
  state: 'QUEUED',
  created: '2026-12-06T10:00:00.000Z',
  updated: '2026-12-06T10:00:00.000Z',
  expiresAt: '2026-12-06T11:00:00.000Z',
  by: 'alice',
  ...overrides,
});

/** The states each command's reads answer, in turn (the last one again once they are used up). */
const scripts: Record<string, DeviceCommand[]> = {};
/** The requests the service received: method, path and query, and the JSON body when there was one. */
let received: { key: string; body?: unknown }[] = [];

const health = {
  updated: '2026-12-06T09:59:00.000Z',
  versionCode: '40201',
  versionName: '4.2.1',
  mode: 'EMBEDDED_PLATFORM_ANDROID',
  hubs: [
    {
      uid: 'hub-1',
      label: 'Main hub',
      version: '1.4.2',
      registeredSince: '2026-01-01T00:00:00Z',
      type: 'USB',
      devices: ['printer-1', 'payment-1', 'scanner-1'].map((uid, index) => ({
        uid,
        label: uid,
        version: '1.0.0',
        health: { state: 'NOMINAL', message: 'OK', messages: [] },
        capability: { type: 'PRINTER', modes: [] },
        commands:
          index === 2
            ? []
            : [
                { command: 'reboot', title: 'Reboot', description: '', payload: {}, arguments: [] },
                { command: index === 0 ? 'print-test-page' : 'reconcile', title: 'T', description: '', payload: {}, arguments: [] },
              ],
      })),
    },
  ],
};

function answer(method: string, path: string, query: URLSearchParams, body: unknown): [number, unknown] {
  if (method === 'POST' && path === `${DEVICE_PATH}/commands`) {
    const sent = body as { command: string; device: string; hub: string };
    if (sent.command === 'self-destruct') {
      const detail = `Sub-device '${sent.hub}/${sent.device}' of device 'kiosk-1' does not advertise command 'self-destruct' in its latest health report; nothing was queued.`;
      return [409, { type: 'about:blank', title: 'Conflict', status: 409, detail, cause: 'COMMAND_NOT_ADVERTISED' }];
    }
    return [202, command({ id: sent.command === 'reboot' ? FAILS : SUCCEEDS, command: sent.command })];
  }
  if (method === 'GET' && path === `${DEVICE_PATH}/commands`) {
    const page = query.get('cursor') === 'page-2' ? [command({ id: FAILS, state: 'FAILED', result: { message: HOSTILE } })] : [command()];
    return [200, { items: page, nextCursor: query.get('cursor') === 'page-2' ? null : 'page-2' }];
  }
  const one = /^\/companies\/acme\/resources\/devices\/kiosk-1\/commands\/(\w+)(\/cancel)?$/.exec(path);
  if (one !== null && method === 'POST') {
    if (one[1] === FAILS) return [409, { type: 'about:blank', title: 'Conflict', status: 409, detail: `Command '${FAILS}' is FAILED.` }];
    return [200, command({ state: 'CANCELLED' })];
  }
  if (one !== null) {
    const script = scripts[one[1] as string] ?? [];
    return [200, script.length > 1 ? script.shift() : (script[0] ?? command())];
  }
  if (method === 'GET' && path === DEVICE_PATH) {
    return [200, { type: 'DEVICE', id: 'kiosk-1', company: 'acme', connection: { state: 'CONNECTED' }, health }];
  }
  return [404, { type: 'about:blank', title: 'Not Found', status: 404, detail: `No ${path}.` }];
}

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      const url = new URL(request.url ?? '/', 'http://127.0.0.1');
      const body = text === '' ? undefined : (JSON.parse(text) as unknown);
      received.push({ key: `${request.method} ${url.pathname}${url.search}`, body });
      const [status, reply] = answer(request.method ?? 'GET', url.pathname, url.searchParams, body);
      response.writeHead(status, { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' });
      response.end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
});

beforeEach(() => {
  received = [];
  scripts[SUCCEEDS] = [
    command({ state: 'DELIVERED', updated: '2026-12-06T10:00:01.000Z' }),
    command({ state: 'DELIVERED', updated: '2026-12-06T10:00:01.000Z' }),
    command({ state: 'SUCCEEDED', updated: '2026-12-06T10:00:03.000Z', result: { message: 'Printed 1 page.', output: { pages: 1 } } }),
  ];
  scripts[FAILS] = [
    command({ id: FAILS, command: 'reboot', state: 'FAILED', updated: '2026-12-06T10:00:02.000Z', result: { message: HOSTILE } }),
  ];
});

/** Runs `dss <args>` against the small service, with a token and company of the environment and no stored login. */
function dss(args: readonly string[]): Promise<DssRun> {
  const environment = { DSS_BASE_URL: baseUrl, DSS_TOKEN: 'a.b.c', DSS_COMPANY: 'acme', DSS_CONFIG_DIR: join(tmpdir(), 'dss-no-login') };
  return runDss({ environment, configDirectory: environment.DSS_CONFIG_DIR }, args, { timeoutMs: 60_000 });
}

/** Control characters other than line feed, and the bidirectional formatting characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for exactly these.
const HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
const SHOWN = 'Paper out\\n\\x1b[2Jcheck the roll \\u202egnp.exe\\u202c';

describe('dss command run', () => {
  it('sends the sub-device, the parsed arguments, the expiry in seconds and the note, and prints the id and state', async () => {
    const run = await dss([
      'command',
      'run',
      'kiosk-1',
      'print-test-page',
      '--hub',
      'hub-1',
      '--device',
      'printer-1',
      '--arguments',
      '{"copies": 2, "text": "héllo"}',
      '--expires-in',
      '10m',
      '--note',
      'paper changed',
    ]);
    expect(run.stderr).toContain(`dss command get kiosk-1 ${SUCCEEDS}`);
    expect(run.code).toBe(0);
    expect(received).toEqual([
      {
        key: `POST ${DEVICE_PATH}/commands`,
        body: {
          hub: 'hub-1',
          device: 'printer-1',
          command: 'print-test-page',
          arguments: { copies: 2, text: 'héllo' },
          expiresInSeconds: 600,
          note: 'paper changed',
        },
      },
    ]);
    expect(run.stdout).toContain(`Command ${SUCCEEDS} (print-test-page on hub-1/printer-1 of kiosk-1) is QUEUED.`);
  });

  it('with --wait, prints each change of state once and exits 0 when it SUCCEEDED', async () => {
    const run = await dss(['command', 'run', 'kiosk-1', 'print-test-page', '--hub', 'hub-1', '--device', 'printer-1', '--wait']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\n');
    expect(lines.filter((line) => /^\S+Z (QUEUED|DELIVERED|SUCCEEDED)/.test(line))).toEqual([
      '2026-12-06T10:00:01.000Z DELIVERED',
      '2026-12-06T10:00:03.000Z SUCCEEDED: Printed 1 page.',
    ]);
    expect(run.stdout).toContain('{"pages":1}');
    expect(received.filter(({ key }) => key === `GET ${DEVICE_PATH}/commands/${SUCCEEDS}`)).toHaveLength(3);
  });

  it('with --wait, exits 1 when it ends FAILED, showing the kiosk message visibly; --json prints the final command exactly', async () => {
    const run = await dss(['command', 'run', 'kiosk-1', 'reboot', '--hub', 'hub-1', '--device', 'printer-1', '--wait']);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(HIDDEN);
    expect(run.stderr).not.toMatch(HIDDEN);
    expect(run.stdout).toContain(`2026-12-06T10:00:02.000Z FAILED: ${SHOWN}`);
    expect(run.stderr).toContain(`error: Command ${FAILS} ended FAILED: ${SHOWN}`);

    const json = await dss(['--json', 'command', 'run', 'kiosk-1', 'reboot', '--hub', 'hub-1', '--device', 'printer-1', '--wait']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toEqual(scripts[FAILS]?.[0]);
    expect(json.stderr).not.toMatch(HIDDEN);
  });

  it('refuses a bad --expires-in or --arguments as bad usage naming the bounds, sending nothing', async () => {
    const base = ['command', 'run', 'kiosk-1', 'reboot', '--hub', 'hub-1', '--device', 'printer-1'];
    for (const value of ['5s', '8d', 'soon']) {
      const run = await dss([...base, '--expires-in', value]);
      expect(run.code, value).toBe(2);
      expect(run.stderr).toContain('from 10 s to 7 days');
    }
    const json = await dss([...base, '--arguments', '{level: 80}']);
    expect(json.code).toBe(2);
    expect(json.stderr).toContain('not valid JSON');
    const missing = await dss(['command', 'run', 'kiosk-1', 'reboot', '--hub', 'hub-1']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--device');
    expect(received).toEqual([]);
  });

  it('explains a command the sub-device does not advertise: the detail, then what it or the others advertise; exit 1', async () => {
    const named = await dss(['command', 'run', 'kiosk-1', 'self-destruct', '--hub', 'hub-1', '--device', 'printer-1']);
    expect(named.code).toBe(1);
    expect(named.stdout).toBe('');
    expect(named.stderr.split('\n').slice(0, 2)).toEqual([
      "error: 409 Conflict: Sub-device 'hub-1/printer-1' of device 'kiosk-1' does not advertise command 'self-destruct' in its latest health report; nothing was queued.",
      'hub-1/printer-1 advertises: reboot, print-test-page.',
    ]);

    const other = await dss(['command', 'run', 'kiosk-1', 'self-destruct', '--hub', 'hub-1', '--device', 'scanner-1']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('  --hub hub-1 --device printer-1: reboot, print-test-page');
    expect(other.stderr).toContain('  --hub hub-1 --device payment-1: reboot, reconcile');
  });
});

describe('dss command list, get and cancel', () => {
  it('lists newest first page by page with --all, messages shown visibly; --json prints the pages exactly', async () => {
    const table = await dss(['command', 'list', 'kiosk-1', '--all', '--limit', '1']);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toMatch(HIDDEN);
    const rows = table.stdout.split('\n').filter((line) => line.includes(SUCCEEDS) || line.includes(FAILS));
    expect(rows.map((row) => row.includes(SUCCEEDS))).toEqual([true, false]);
    expect(rows[1]).toContain(SHOWN);
    expect(table.stdout.split('\n')[1]).toMatch(/ID\s+│ SUB-DEVICE\s+│ COMMAND\s+│ STATE\s+│ UPDATED\s+│ BY\s+│ MESSAGE/);
    expect(received.map(({ key }) => key)).toEqual([
      `GET ${DEVICE_PATH}/commands?limit=1`,
      `GET ${DEVICE_PATH}/commands?limit=1&cursor=page-2`,
    ]);

    const json = await dss(['--json', 'command', 'list', 'kiosk-1']);
    expect(JSON.parse(json.stdout)).toEqual({ items: [command()], nextCursor: 'page-2' });
  });

  it('gets one command, cancels a pending one, and exits 1 naming the state of a final one', async () => {
    scripts[SUCCEEDS] = [command({ arguments: { copies: 2 }, note: 'why' })];
    const got = await dss(['command', 'get', 'kiosk-1', SUCCEEDS]);
    expect(got.code).toBe(0);
    expect(got.stdout).toMatch(/arguments\s+│ \{"copies":2\}/);
    expect(got.stdout).toMatch(/subDevice\s+│ hub-1\/printer-1/);

    const cancelled = await dss(['command', 'cancel', 'kiosk-1', SUCCEEDS]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`Command ${SUCCEEDS} is CANCELLED.`);

    const final = await dss(['command', 'cancel', 'kiosk-1', FAILS]);
    expect(final.code).toBe(1);
    expect(final.stderr).toContain(`error: 409 Conflict: Command '${FAILS}' is FAILED.`);
  });
});

describe('--expires-in and --arguments', () => {
  it('reads seconds or a whole number of one unit, within 10 s and 7 days', () => {
    expect(durationSeconds('90s')).toBe(90);
    expect(durationSeconds('10m')).toBe(600);
    expect(durationSeconds('2h')).toBe(7_200);
    expect(durationSeconds('7d')).toBe(604_800);
    expect(durationSeconds('45')).toBe(45);
    expect(durationSeconds('1.5h')).toBeUndefined();
    expect(durationSeconds('-10s')).toBeUndefined();
    expect(expiresInArgument('10')).toBe(10);
    expect(expiresInArgument('7d')).toBe(604_800);
    expect(() => expiresInArgument('9s')).toThrow(/from 10 s to 7 days/);
    expect(() => expiresInArgument('169h')).toThrow(/from 10 s to 7 days/);
  });

  it('takes any JSON value and refuses what is not JSON', () => {
    expect(jsonArgument('{"level":80}')).toEqual({ level: 80 });
    expect(jsonArgument('"text"')).toBe('text');
    expect(jsonArgument('[1,2]')).toEqual([1, 2]);
    expect(() => jsonArgument("{'level':80}")).toThrow(/not valid JSON/);
  });
});

describe('waitForFinal', () => {
  const states = (...names: DeviceCommand['state'][]) => names.map((state) => command({ state }));

  it('reads with waits growing by half up to the bound, reports each change once, and ends on a final state', async () => {
    const reads = states('QUEUED', 'DELIVERED', 'DELIVERED', 'DELIVERED', 'DELIVERED', 'DELIVERED', 'DELIVERED', 'DELIVERED', 'EXPIRED');
    const waits: number[] = [];
    const changes: string[] = [];
    const final = await waitForFinal(command(), {
      read: async () => reads.shift() as DeviceCommand,
      onChange: (changed) => changes.push(changed.state),
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    expect(final.state).toBe('EXPIRED');
    expect(changes).toEqual(['DELIVERED', 'EXPIRED']);
    expect(waits[0]).toBe(FIRST_POLL_DELAY_MS);
    expect(waits).toEqual([500, 750, 1125, 1688, 2532, 3798, 5000, 5000, 5000]);
    expect(Math.max(...waits)).toBe(MAX_POLL_DELAY_MS);
    expect(nextPollDelay(MAX_POLL_DELAY_MS)).toBe(MAX_POLL_DELAY_MS);
  });

  it('reads again after a 503 or a lost connection, but gives up after too many in a row, and at once on a 404', async () => {
    const busy = () =>
      new ApiError(503, { type: 'about:blank', title: 'Busy', status: 503, detail: 'Busy.' }, new Response(null, { status: 503 }));
    const reads: (DeviceCommand | Error)[] = [busy(), new TypeError('fetch failed'), ...states('SUCCEEDED')];
    const read = async () => {
      const next = reads.shift();
      if (next instanceof Error) throw next;
      return next as DeviceCommand;
    };
    const sleep = async () => undefined;
    expect((await waitForFinal(command(), { read, onChange: () => undefined, sleep })).state).toBe('SUCCEEDED');

    let failed = 0;
    const alwaysBusy = async (): Promise<DeviceCommand> => {
      failed += 1;
      throw busy();
    };
    await expect(waitForFinal(command(), { read: alwaysBusy, onChange: () => undefined, sleep })).rejects.toThrow('Busy.');
    expect(failed).toBe(MAX_FAILED_READS);

    const gone = new ApiError(
      404,
      { type: 'about:blank', title: 'Not Found', status: 404, detail: 'Gone.' },
      new Response(null, { status: 404 }),
    );
    let reads404 = 0;
    const notFound = async (): Promise<DeviceCommand> => {
      reads404 += 1;
      throw gone;
    };
    await expect(waitForFinal(command(), { read: notFound, onChange: () => undefined, sleep })).rejects.toThrow('Gone.');
    expect(reads404).toBe(1);
  });
});
