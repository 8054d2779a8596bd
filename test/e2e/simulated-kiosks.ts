/**
 * Simulated kiosks for the rollout tests: a fleet of `count` kiosks `{prefix}{nn}` of one company, registered by alice,
 * reporting their health and pulling every 300 ms, installing what they are given or failing every install
 * (`failureRate` 1), never silent, never changing health on their own. The caller stops it (`fleet.stop()`).
 */
import { join } from 'node:path';
import { SimulatedFleet } from '../../simulator/fleet.js';
import { DEMO_PASSWORDS, type LocalService, type ServiceSettings } from './harness.js';

/** Which kiosks to start. */
export interface SimulatedKiosks {
  company: string;
  /** Id prefix, e.g. `acme-wave-`: the kiosks are `acme-wave-01`… */
  prefix: string;
  count: number;
  /** Share of installs that fail, 0 to 1. */
  failureRate: number;
}

/** The file's local service, where the kiosks report. */
type Local = { service: LocalService; settings: ServiceSettings };

/** The fleet of the kiosks, not set up yet; their credentials are kept in the service's data folder. */
function fleetOf(local: Local, kiosks: SimulatedKiosks): SimulatedFleet {
  return new SimulatedFleet({
    baseUrl: local.service.api,
    authUrl: local.service.auth,
    username: 'alice',
    password: DEMO_PASSWORDS.alice,
    company: kiosks.company,
    devices: kiosks.count,
    idPrefix: kiosks.prefix,
    idDigits: 2,
    healthIntervalMs: 300,
    pullIntervalMs: 300,
    failureRate: kiosks.failureRate,
    silenceRate: 0,
    healthChangeRate: 0,
    credentialsFile: join(local.settings.dataDirectory, `fleet-${kiosks.prefix}.json`),
  });
}

/** Starts the kiosks on the file's local service; their credentials are kept in its data folder. */
export async function startSimulatedKiosks(local: Local, kiosks: SimulatedKiosks): Promise<SimulatedFleet> {
  const fleet = fleetOf(local, kiosks);
  await fleet.start();
  return fleet;
}

/**
 * The same kiosks made ready but not started: registered, holding device tokens, and each having reported its health
 * once (so that a search finds them by it), but pulling nothing: what is deployed to them waits until the caller's
 * `fleet.start()` sets them going (installing or failing as `failureRate` says). The caller stops it.
 * @throws Error when a health report is not accepted (204).
 */
export async function readySimulatedKiosks(local: Local, kiosks: SimulatedKiosks): Promise<SimulatedFleet> {
  const fleet = fleetOf(local, kiosks);
  await fleet.setUp();
  await Promise.all(
    fleet.sessions().map(async (session) => {
      const response = await fetch(`${local.service.api}/device/health`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${session.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(session.health),
      });
      if (response.status !== 204) throw new Error(`health of ${session.id} answered ${response.status}: ${await response.text()}`);
    }),
  );
  return fleet;
}
