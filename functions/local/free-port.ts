import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';

/** Lowest port freePort hands out: above the well-known and most registered service ports. */
const LOWEST_PORT = 10_000;
/** The ephemeral range when the kernel does not say (Linux's default, net.ipv4.ip_local_port_range). */
const DEFAULT_EPHEMERAL_LOW = 32_768;
/** Random ports tried below the ephemeral range before asking the OS for one. */
const ATTEMPTS = 50;

/** The first port of the kernel's ephemeral range (Linux /proc; the default elsewhere). */
async function ephemeralLow(): Promise<number> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => '');
  const low = Number(range.trim().split(/\s+/)[0]);
  return Number.isInteger(low) && low > 0 ? low : DEFAULT_EPHEMERAL_LOW;
}

/** Binds `port` on 127.0.0.1 (0: any) and releases it: the port bound, or undefined when it is taken. */
async function bindable(port: number): Promise<number | undefined> {
  const server = createServer();
  const bound = await new Promise<boolean>((done) => {
    server.once('error', () => done(false));
    server.listen(port, '127.0.0.1', () => done(true));
  });
  if (!bound) return undefined;
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  return address === null || typeof address === 'string' ? undefined : address.port;
}

/**
 * A free TCP port on 127.0.0.1 (bound, read, released), picked at random below the kernel's ephemeral range: the OS
 * gives ports of that range to outgoing connections too, so a port taken from it could be given to a client socket
 * between now and the moment its server binds it (seconds later for a runtime that seeds its data first), and the
 * server would fail with EADDRINUSE. Falls back to a port of the OS's choosing when none below is free.
 * @throws Error when none can be had.
 */
export async function freePort(): Promise<number> {
  const low = await ephemeralLow();
  if (low - LOWEST_PORT >= 1_000) {
    for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
      const port = await bindable(LOWEST_PORT + randomInt(low - LOWEST_PORT));
      if (port !== undefined) return port;
    }
  }
  const port = await bindable(0);
  if (port === undefined) throw new Error('Could not allocate a free port.');
  return port;
}
