/**
 * What a device, user or older store wrote never acts on the operator's terminal: the CLI shows C0 and C1 controls and
 * bidirectional formatting characters visibly in tables, plain lines and errors, while `--json` stays exact. The CLI
 * runs as a child process (bin/dss.mjs) against a small service on 127.0.0.1 that answers texts the API now refuses,
 * as a store written before that rule, or any other service, may hold.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { visible } from '../../../cli/output.js';
import { type DssRun, runDss } from '../../e2e/cli-runner.js';

/** The reproducer: a serial that recolours the terminal and sets its title, a location that clears it. */
const SERIAL = '\u001b[31mRED\u001b[0m\u001b]0;pwned\u0007';
const LOCATION = '\u001b[2J\u001b[HCLEARED';
/** A right-to-left override that makes `gnp.exe` read `exe.png`. */
const SPOOF = '\u202Egnp.exe\u202C';

const device = {
  type: 'DEVICE',
  id: 'kiosk-1',
  company: 'acme',
  serial: SERIAL,
  created: '2026-12-01T10:00:00.000Z',
  updated: '2026-12-01T10:00:00.000Z',
  location: { name: LOCATION, description: `Line one\nline two ${SPOOF}\u009b2J` },
  connection: { state: 'CONNECTED' },
};

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    const json = (status: number, body: unknown, type = 'application/json') => {
      response.writeHead(status, { 'content-type': type });
      response.end(JSON.stringify(body));
    };
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/resources/search') {
      json(200, {
        total: 1,
        page: { page: 1, pageSize: 20, pages: 1 },
        sort: { field: 'serial', direction: 'ASC' },
        resources: [device],
      });
    } else if (url.pathname === '/companies/acme/resources/devices/kiosk-1') {
      json(200, device);
    } else {
      json(
        404,
        {
          type: 'about:blank',
          title: 'Not Found',
          status: 404,
          // A line feed that would start a line reading as the CLI's own.
          detail: `No device ${SPOOF}\u001b]0;owned\u0007\nLogged in as root (acme)`,
          errors: [{ path: '/x', message: LOCATION }],
        },
        'application/problem+json',
      );
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
});

/** Runs `dss <args>` against the small service, with a token and company of the environment and no stored login. */
function dss(args: readonly string[]): Promise<DssRun> {
  const environment = { DSS_BASE_URL: baseUrl, DSS_TOKEN: 'a.b.c', DSS_COMPANY: 'acme', DSS_CONFIG_DIR: join(tmpdir(), 'dss-no-login') };
  return runDss({ environment, configDirectory: environment.DSS_CONFIG_DIR }, args, { timeoutMs: 60_000 });
}

/** Control characters other than line feed, and the bidirectional formatting characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for exactly these.
const HIDDEN = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
/** The same, line breaks and tabs too: a JSON text holds none but its own line feeds and indentation. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for exactly these.
const HIDDEN_IN_JSON = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

describe('visible', () => {
  it('writes controls as \\xNN and bidirectional formatting characters as \\uNNNN, leaving other text alone', () => {
    expect(visible(SERIAL)).toBe('\\x1b[31mRED\\x1b[0m\\x1b]0;pwned\\x07');
    expect(visible(SPOOF)).toBe('\\u202egnp.exe\\u202c');
    expect(visible('a\u0085b\u007fc\u2066d\u2069')).toBe('a\\x85b\\x7fc\\u2066d\\u2069');
    expect(visible('Café 東京 عربي \u200f')).toBe('Café 東京 عربي \u200f');
    expect(visible('one\ntwo\tthree\r')).toBe('one\\ntwo\\tthree\\r');
    expect(visible('one\ntwo\r', true)).toBe('one\ntwo\\r');
  });
});

describe('the CLI facing hostile texts', () => {
  it('dss search shows them visibly in its table; --json answers them exactly', async () => {
    const table = await dss(['search', '--global', 'kiosk-1']);
    expect(table.code).toBe(0);
    expect(table.stdout).not.toMatch(HIDDEN);
    expect(table.stdout).toContain('\\x1b[31mRED\\x1b[0m\\x1b]0;pwned\\x07');
    expect(table.stdout).toContain('\\x1b[2J\\x1b[HCLEARED');

    const json = await dss(['--json', 'search', '--global', 'kiosk-1']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout).resources[0]).toEqual(device);
  });

  it('dss devices get shows them visibly, a multi-line description on one line; --json answers them exactly, escaped', async () => {
    const record = await dss(['devices', 'get', 'kiosk-1']);
    expect(record.stderr).toBe('');
    expect(record.code).toBe(0);
    expect(record.stdout).not.toMatch(HIDDEN);
    expect(record.stdout).toContain('\\x1b[2J\\x1b[HCLEARED');
    expect(record.stdout).toContain('Line one\\nline two \\u202egnp.exe\\u202c\\x9b2J');

    // The JSON parses to the very same device, and escapes what a terminal would act on or reorder.
    const json = await dss(['--json', 'devices', 'get', 'kiosk-1']);
    expect(JSON.parse(json.stdout)).toEqual(device);
    expect(json.stdout).not.toMatch(HIDDEN_IN_JSON);
    expect(json.stdout).toContain('\\u202egnp.exe\\u202c');
    expect(json.stdout).toContain('\\u001b[2J');
    expect(json.stdout).toContain('\\u009b2J');
  });

  it("shows an error's detail and violations visibly on stderr", async () => {
    const refused = await dss(['devices', 'get', 'kiosk-2']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).not.toMatch(HIDDEN);
    expect(refused.stderr).toContain('No device \\u202egnp.exe\\u202c\\x1b]0;owned\\x07\\nLogged in as root (acme)');
    expect(refused.stderr.split('\n').filter((line) => line.startsWith('Logged in'))).toEqual([]);
    expect(refused.stderr).toContain('/x: \\x1b[2J\\x1b[HCLEARED');
  });
});
