/**
 * End-to-end over `npm start` (bin/local.ts): a rollout that pauses or completes puts one RolloutStateChanged event on
 * the service's bus (`.data/events/events.jsonl` locally), derived from the rollouts table's stream, which webhooks
 * deliver as rollout.paused and rollout.completed: a receiver on 127.0.0.1 gets each once, signed as the Standard
 * Webhooks specification says (checked with the `standardwebhooks` package). Simulated kiosks (simulated-kiosks.ts)
 * that fail every install pause a rollout on its first wave's failures; kiosks that install complete one; an
 * operator's pause names them. The rollout sweeper runs every 200 ms.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import type { RolloutStateChangedEvent } from '../../functions/core/webhooks/events.js';
import type { SimulatedFleet } from '../../simulator/fleet.js';
import { clientFor, eventually, tokenFor, useLocalService } from './harness.js';
import { startSimulatedKiosks } from './simulated-kiosks.js';

const COMPANY = 'acme';
const SCENARIO = 'acme-welcome';
const ENVIRONMENT = { ROLLOUT_SWEEP_INTERVAL_MS: '200', ROLLOUT_CHUNK_TIMEOUT_SECONDS: '2' };

const local = useLocalService({ users: ['alice', 'root'], environment: ENVIRONMENT });
const fleets: SimulatedFleet[] = [];

/** What the receiver on 127.0.0.1 got: each request's headers and body. */
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
let receiver: Server;
/** The webhook subscribed to rollout.paused and rollout.completed, with its secret. */
let webhook: components['schemas']['WebhookWithSecret'];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      received.push({ headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((listening) => receiver.listen(0, '127.0.0.1', listening));
  // Webhooks are a company administrator's: root makes alice one, and her new token carries the role.
  const root = clientFor(local.service, local.tokens.root);
  expectOk(await root.main.PATCH('/admin/users/{username}', { params: { path: { username: 'alice' } }, body: { role: 'company-admin' } }));
  const admin = clientFor(local.service, await tokenFor(local.service, 'alice'));
  webhook = expectOk(
    await admin.main.POST('/companies/{companyId}/webhooks', {
      params: { path: { companyId: COMPANY } },
      body: {
        url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/rollouts`,
        events: ['rollout.paused', 'rollout.completed'],
      },
    }),
  );
}, 60_000);

type Rollout = components['schemas']['Rollout'];

const alice = () => clientFor(local.service, local.tokens.alice);

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
  await new Promise((closed) => receiver?.close(closed));
});

/** The rollout events the receiver got for rollout `id`, each verified with the webhook's secret (throws if one is not). */
function deliveredFor(id: string): { id: string; body: { type: string; timestamp: string; data: Record<string, unknown> } }[] {
  const verifier = new StandardWebhook(webhook.secret);
  return received.flatMap(({ headers, body }) => {
    const verified = verifier.verify(body, headers as Record<string, string>) as {
      type: string;
      timestamp: string;
      data: Record<string, unknown>;
    };
    return verified.data.rolloutId === id ? [{ id: headers['webhook-id'] as string, body: verified }] : [];
  });
}

/** Starts `count` simulated kiosks `{prefix}{nn}` of COMPANY; returns their ids. */
async function startFleet(prefix: string, count: number, failureRate: number): Promise<string[]> {
  fleets.push(await startSimulatedKiosks(local, { company: COMPANY, prefix, count, failureRate }));
  return Array.from({ length: count }, (_, index) => `${prefix}${String(index + 1).padStart(2, '0')}`);
}

/** Creates a rollout of COMPANY as alice. */
async function createRollout(body: components['schemas']['RolloutCreateBody']): Promise<Rollout> {
  return expectOk(await alice().main.POST('/companies/{companyId}/resources/rollouts', { params: { path: { companyId: COMPANY } }, body }));
}

async function getRollout(id: string): Promise<Rollout> {
  return expectOk(
    await alice().main.GET('/companies/{companyId}/resources/rollouts/{rolloutId}', {
      params: { path: { companyId: COMPANY, rolloutId: id } },
    }),
  );
}

/** The RolloutStateChanged events of rollout `id` on the local bus, in order. */
async function rolloutEvents(id: string): Promise<RolloutStateChangedEvent[]> {
  const text = await readFile(join(local.settings.dataDirectory, 'events', 'events.jsonl'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as { type: string; rolloutId?: string })
    .filter((event): event is RolloutStateChangedEvent => event.type === 'RolloutStateChanged' && event.rolloutId === id);
}

/** Waits until rollout `id` has `count` RolloutStateChanged events; returns them. */
async function eventsOnceThere(id: string, count: number, what: string): Promise<RolloutStateChangedEvent[]> {
  await eventually(async () => (await rolloutEvents(id)).length >= count, what, 60_000);
  return rolloutEvents(id);
}

describe('rollout events on the bus', () => {
  it("publishes one PAUSED event with the wave and the reason when a wave's failures pause a rollout, one COMPLETED when one completes", async () => {
    const failing = await startFleet('acme-evfail-', 4, 1);
    const paused = await createRollout({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
      targets: { ids: failing },
      waves: [2],
      failureThreshold: 0.1,
    });
    const [pause] = await eventsOnceThere(paused.id, 1, 'the PAUSED event');
    const rollout = await getRollout(paused.id);
    expect(rollout.state).toBe('PAUSED');
    expect(pause).toEqual({
      type: 'RolloutStateChanged',
      company: COMPANY,
      rolloutId: paused.id,
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
      state: 'PAUSED',
      at: expect.any(String),
      wave: 1,
      reason: rollout.pausedReason,
    });
    expect(rollout.events.find((event) => event.type === 'PAUSED')?.at).toBe(pause?.at);

    const installing = await startFleet('acme-evgood-', 3, 0);
    const completed = await createRollout({
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { ids: installing },
    });
    const [done] = await eventsOnceThere(completed.id, 1, 'the COMPLETED event');
    expect(await getRollout(completed.id)).toMatchObject({ state: 'COMPLETED' });
    expect(done).toEqual({
      type: 'RolloutStateChanged',
      company: COMPANY,
      rolloutId: completed.id,
      action: 'DEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      state: 'COMPLETED',
      at: expect.any(String),
    });

    // Each change once: the first rollout's pause was not published again while the second ran.
    expect(await rolloutEvents(paused.id)).toHaveLength(1);
    expect(await rolloutEvents(completed.id)).toHaveLength(1);

    // The webhook received each, signed: rollout.paused with the pause's wave and reason, rollout.completed.
    await eventually(async () => deliveredFor(paused.id).length > 0 && deliveredFor(completed.id).length > 0, 'both deliveries', 30_000);
    expect(deliveredFor(paused.id).map(({ body }) => body)).toEqual([
      {
        type: 'rollout.paused',
        timestamp: pause?.at,
        data: {
          rolloutId: paused.id,
          action: 'DEPLOY',
          what: { type: 'SCENARIO', id: SCENARIO, subId: '1.1.0' },
          state: 'PAUSED',
          wave: 1,
          reason: rollout.pausedReason,
        },
      },
    ]);
    expect(deliveredFor(completed.id).map(({ body }) => [body.type, body.timestamp, body.data.state])).toEqual([
      ['rollout.completed', done?.at, 'COMPLETED'],
    ]);
  }, 150_000);

  it('names the operator who paused a rollout, and a second pause is a second event', async () => {
    // Three waves of one of the kiosks that installed 1.0.0 above: the rollout cannot end between the two pauses.
    const ids = Array.from({ length: 3 }, (_, index) => `acme-evgood-0${index + 1}`);
    const rollout = await createRollout({
      action: 'UNDEPLOY',
      what: { type: 'SCENARIO', id: SCENARIO, subId: '1.0.0' },
      targets: { ids },
      waves: [1, 1],
    });
    const control = async (verb: 'pause' | 'resume') =>
      expectOk(
        await alice().main.POST(`/companies/{companyId}/resources/rollouts/{rolloutId}/${verb}`, {
          params: { path: { companyId: COMPANY, rolloutId: rollout.id } },
        }),
      );
    const first = await control('pause');
    const [pause] = await eventsOnceThere(rollout.id, 1, 'the operator PAUSED event');
    expect(pause).toMatchObject({ state: 'PAUSED', action: 'UNDEPLOY', by: expect.any(String) });
    expect(first.pausedReason).toBe(`Paused by ${pause?.by}.`);
    expect(pause).not.toHaveProperty('reason');
    expect(pause).not.toHaveProperty('wave');

    await control('resume');
    await control('pause');
    const events = await eventsOnceThere(rollout.id, 2, 'the second PAUSED event');
    expect(events.map((event) => event.state)).toEqual(['PAUSED', 'PAUSED']);
    expect(new Set(events.map((event) => event.at)).size).toBe(2);
  }, 120_000);
});
