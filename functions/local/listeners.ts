/**
 * The local runtime's listeners: the main, upload and auth addresses serving the route table (each behind its
 * admission control), and the loopback admin listener.
 */
import { rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:net';
import { join } from 'node:path';
import { ENV } from '../contract/environment.js';
import { ROUTES } from '../contract/routes.js';
import { reindexSearch } from '../platform/composition/search-rebuild.js';
import { createAdminServer, RUNTIME_FILE } from './admin.js';
import { type AdmissionOptions, createApiServer } from './http-gateway.js';
import type { Log, RuntimeLayout, RuntimeSettings, StopSteps } from './runtime-layout.js';
import type { WriteCounter } from './write-counter.js';

/** Listens on 127.0.0.1:`port` (0: a free port). @throws the server's error, e.g. EADDRINUSE */
function listen(server: Server, port: number): Promise<void> {
  return new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(port, '127.0.0.1', () => done());
  });
}

/** Closes a listener and drops its open connections, for a stop step. */
function closeServer(server: Server & { closeAllConnections(): void }): Promise<void> {
  return new Promise<void>((done) => {
    server.close(() => done());
    server.closeAllConnections();
  });
}

/** The admission control of one API listener, or undefined when its MAX_IN_FLIGHT_* is 0 (no bound). */
function admissionOf(api: 'api' | 'upload' | 'auth', runtimeSettings: RuntimeSettings): AdmissionOptions | undefined {
  const maxInFlight = {
    api: runtimeSettings[ENV.maxInFlightMain],
    upload: runtimeSettings[ENV.maxInFlightUpload],
    auth: runtimeSettings[ENV.maxInFlightAuth],
  };
  // Every handler runs on this process's one event loop: bounded work per address keeps what is admitted fast
  // and answers the rest 503 at once (0: no bound).
  return maxInFlight[api] === 0
    ? undefined
    : {
        maxInFlight: maxInFlight[api],
        maxQueued: runtimeSettings[ENV.maxQueuedRequests],
        maxWaitMs: runtimeSettings[ENV.maxQueueWaitMs],
        overloadWaitMs: Math.min(runtimeSettings[ENV.overloadQueueWaitMs], runtimeSettings[ENV.maxQueueWaitMs]),
        // Secret checks are what a flood targets: one address's share of the auth address is bounded.
        ...(api === 'auth' && runtimeSettings[ENV.maxPerSourceAuth] > 0 ? { maxPerSource: runtimeSettings[ENV.maxPerSourceAuth] } : {}),
      };
}

/** Starts the main, upload and auth listeners invoking the route table's handlers. @throws Error when a port is taken */
export async function startApiListeners(layout: RuntimeLayout, root: string, stops: StopSteps, log: Log): Promise<void> {
  const { addresses, ports, runtimeSettings } = layout;
  for (const api of ['api', 'upload', 'auth'] as const) {
    const server = createApiServer(
      api === 'api' ? 'main' : api,
      ROUTES,
      root,
      (error) => log(`handler error: ${(error as Error).stack ?? String(error)}`),
      {
        main: addresses.api,
        upload: addresses.upload,
        auth: addresses.auth,
      },
      admissionOf(api, runtimeSettings),
      // The console's page comes from the main address; it signs in and uploads across origins.
      api === 'api' ? [] : [addresses.api],
    );
    await listen(server, ports[api]);
    stops.push(() => closeServer(server));
  }
}

/**
 * Starts the loopback admin listener on a free port and writes its address, with the pid, to RUNTIME_FILE in the
 * data folder; returns `http://127.0.0.1:<port>`.
 */
export async function startAdmin(dataDirectory: string, writeCounter: WriteCounter, stops: StopSteps, log: Log): Promise<string> {
  const admin = createAdminServer(reindexSearch, log, () => writeCounter.counts());
  await listen(admin, 0);
  const adminAddress = `http://127.0.0.1:${(admin.address() as { port: number }).port}`;
  stops.push(() => closeServer(admin));
  const runtimeFile = join(dataDirectory, RUNTIME_FILE);
  await writeFile(runtimeFile, `${JSON.stringify({ pid: process.pid, admin: adminAddress })}\n`);
  stops.push(() => rm(runtimeFile, { force: true }));
  return adminAddress;
}
