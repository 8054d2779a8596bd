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

/** Starts the kiosks on the file's local service; their credentials are kept in its data folder. */
export async function startSimulatedKiosks(
  local: { service: LocalService; settings: ServiceSettings },
  kiosks: SimulatedKiosks,
): Promise<SimulatedFleet> {
  const fleet = new SimulatedFleet({
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
  await fleet.start();
  return fleet;
}
