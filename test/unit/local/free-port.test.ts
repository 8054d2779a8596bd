/**
 * freePort (functions/local/free-port.ts): the ports handed to the local runtime's servers and to tests come from
 * below the kernel's ephemeral range, so that no outgoing connection can take one before its server binds it.
 */
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../../functions/local/free-port.js';

describe('freePort', () => {
  it('hands out ports below the ephemeral range that a server can bind', async () => {
    const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '32768 60999');
    const low = Number(range.trim().split(/\s+/)[0]);
    const ports = await Promise.all(Array.from({ length: 20 }, () => freePort()));
    for (const port of ports) expect(port).toBeLessThan(low);
    const server = createServer();
    await new Promise<void>((done) => server.listen(ports[0], '127.0.0.1', done));
    await new Promise<void>((done) => server.close(() => done()));
  });
});
