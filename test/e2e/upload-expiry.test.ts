/**
 * Presigned upload slots that never finish, over real HTTP against `bin/local.ts`: with a 2-second slot lifetime
 * (UPLOAD_SLOT_TTL_SECONDS) and the runtime's upload sweeper every 500 ms (UPLOAD_SWEEP_INTERVAL_MS), a slot that
 * gets no archive is REJECTED with reason `expired` soon after its expiresAt.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  call,
  eventually,
  type LocalService,
  newServiceSettings,
  removeDataDirectory,
  type ServiceSettings,
  startService,
  tokenFor,
} from './harness.js';

let settings: ServiceSettings;
let service: LocalService;
let alice: string;

beforeAll(async () => {
  settings = await newServiceSettings();
  service = await startService(settings, { environment: { UPLOAD_SLOT_TTL_SECONDS: '2', UPLOAD_SWEEP_INTERVAL_MS: '500' } });
  alice = await tokenFor(service, 'alice');
}, 120_000);

afterAll(async () => {
  await service?.stop();
  if (settings !== undefined) await removeDataDirectory(settings);
});

describe('upload slots that never finish', () => {
  it('a slot that never gets its archive is REJECTED with reason expired after its expiresAt', async () => {
    const requested = Date.now();
    const slot = await call(`${service.upload}/companies/acme/resources/scenarios/uploads`, { method: 'POST', token: alice });
    expect(slot.status).toBe(201);
    const expiresAt = Date.parse(slot.body.expiresAt);
    expect(expiresAt - requested).toBeGreaterThanOrEqual(1_000);
    expect(expiresAt - requested).toBeLessThan(4_000);
    const status = () => call(`${service.upload}/companies/acme/resources/scenarios/uploads/${slot.body.uploadId}`, { token: alice });
    expect((await status()).body.status).toBe('PENDING');

    await eventually(async () => (await status()).body.status !== 'PENDING', 'the sweeper to finish the slot');
    const finished = await status();
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(finished.status).toBe(200);
    expect(finished.body).toMatchObject({
      uploadId: slot.body.uploadId,
      status: 'REJECTED',
      problem: { status: 410, title: 'Upload Not Completed', reason: 'expired' },
    });
    expect(finished.body.problem.detail).toMatch(/Request a new upload slot/);
  });

  it('an archive PUT after the slot expired is not stored and not kept', async () => {
    const slot = await call(`${service.upload}/companies/acme/resources/scenarios/uploads`, { method: 'POST', token: alice });
    const status = () => call(`${service.upload}/companies/acme/resources/scenarios/uploads/${slot.body.uploadId}`, { token: alice });
    await new Promise((done) => setTimeout(done, Date.parse(slot.body.expiresAt) - Date.now() + 1_000));
    // s3rver may or may not refuse the expired URL; either way nothing may be stored or left behind.
    await fetch(slot.body.url, { method: 'PUT', headers: slot.body.headers, body: new Uint8Array(1024) });
    await eventually(async () => (await status()).body.status !== 'PENDING', 'the slot to be finished');
    await new Promise((done) => setTimeout(done, 1_000));
    expect((await status()).body).toMatchObject({ status: 'REJECTED', problem: { reason: 'expired' } });
    const leftover = await fetch(slot.body.url.replace(/\?.*$/, ''));
    expect(leftover.status).toBe(404);
  });
});
