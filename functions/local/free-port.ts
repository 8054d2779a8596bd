import { createServer } from 'node:net';

/** Asks the OS for a free TCP port on 127.0.0.1 (bound, read, released). @throws Error when none can be had. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('Could not allocate a free port.');
  return address.port;
}
