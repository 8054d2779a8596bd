/**
 * Presigned upload slots that never finish, over real HTTP against `bin/local.ts`: with a 2-second slot lifetime
 * (UPLOAD_SLOT_TTL_SECONDS) and the runtime's upload sweeper every 500 ms (UPLOAD_SWEEP_INTERVAL_MS), a slot that
 * gets no archive is REJECTED with reason `expired` soon after its expiresAt.
 */
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { clientFor, eventually, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice'], environment: { UPLOAD_SLOT_TTL_SECONDS: '2', UPLOAD_SWEEP_INTERVAL_MS: '500' } });

/** A new upload slot of acme, as alice. */
const newSlot = () =>
  clientFor(local.service, local.tokens.alice).upload.POST('/companies/{companyId}/resources/scenarios/uploads', {
    params: { path: { companyId: 'acme' } },
  });

/** The status of an upload slot of acme, as alice (must answer 200). */
const slotStatus = async (uploadId: string) =>
  expectOk(
    await clientFor(local.service, local.tokens.alice).upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
      params: { path: { companyId: 'acme', uploadId } },
    }),
  );

describe('upload slots that never finish', () => {
  it('a slot that never gets its archive is REJECTED with reason expired after its expiresAt', async () => {
    const requested = Date.now();
    const granted = await newSlot();
    expect(granted.response.status).toBe(201);
    const slot = expectOk(granted);
    const expiresAt = Date.parse(slot.expiresAt);
    expect(expiresAt - requested).toBeGreaterThanOrEqual(1_000);
    expect(expiresAt - requested).toBeLessThan(4_000);
    const status = () => slotStatus(slot.uploadId);
    expect((await status()).status).toBe('PENDING');

    await eventually(async () => (await status()).status !== 'PENDING', 'the sweeper to finish the slot');
    const finished = await status();
    expect(Date.now()).toBeGreaterThanOrEqual(expiresAt);
    expect(finished).toMatchObject({
      uploadId: slot.uploadId,
      status: 'REJECTED',
      problem: { status: 410, title: 'Upload Not Completed', reason: 'expired' },
    });
    expect(finished.problem?.detail).toMatch(/Request a new upload slot/);
  });

  it('an archive PUT after the slot expired is not stored and not kept', async () => {
    const slot = expectOk(await newSlot());
    const status = () => slotStatus(slot.uploadId);
    // Expired: the sweeper has rejected the slot.
    await eventually(async () => (await status()).status !== 'PENDING', 'the slot to expire');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(slot.expiresAt));
    // The presigned URL is S3's, outside the document: a plain PUT. s3rver may or may not refuse the expired URL;
    // either way nothing may be stored or left behind.
    await fetch(slot.url, { method: 'PUT', headers: slot.headers, body: new Uint8Array(1024) });
    // A stored object is deleted once the service has handled its arrival; a refused PUT left none.
    const leftover = async () => (await fetch(slot.url.replace(/\?.*$/, ''))).status;
    await eventually(async () => (await leftover()) === 404, 'no object left behind');
    expect(await status()).toMatchObject({ status: 'REJECTED', problem: { reason: 'expired' } });
  });
});
