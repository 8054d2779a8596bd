/**
 * Idempotency-Key over HTTP against the local runtime (DynamoDB Local enforces the 400 KB item limit): a 5,000-entry
 * response is stored and replayed, a malformed key is refused before anything runs, and a request without a key
 * logs nothing about keys.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { clientFor, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice'] });

const entry = (device: string, version: string) => ({
  target: { type: 'DEVICE', id: device, subId: null },
  what: { type: 'SCENARIO', id: 'acme-welcome', subId: version },
  action: 'DEPLOY' as const,
});
const kiosk = (index: number) => `acme-kiosk-${String(index).padStart(4, '0')}`;
/**
 * POSTs a deployment request through the typed client, with an `Idempotency-Key` when given. The empty and the
 * 256-character keys below are outside the document's 1 to 255 characters but still strings: the typed client sends
 * them as they are, and the service must refuse them.
 */
const deploy = (body: components['schemas']['DeploymentRequestBody'], key?: string) =>
  clientFor(local.service, local.tokens.alice).main.POST('/companies/{companyId}/resources/deployments', {
    params: { path: { companyId: 'acme' }, header: key === undefined ? {} : { 'Idempotency-Key': key } },
    body,
  });
const activeCount = async () => {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/DEVICE/deployments', {
        params: { path: { companyId: 'acme' }, query: cursor === undefined ? { limit: 100 } : { limit: 100, cursor } },
      }),
    );
    count += page.items.length;
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return count;
};

describe('Idempotency-Key with a 5,000-entry request', () => {
  it('stores the response however large it is: the retry replays it with 200 and executes nothing again', {
    timeout: 240_000,
  }, async () => {
    // 200 real deployments, and 4,800 entries naming unknown devices by 256 random characters: about 2 MB of
    // response that compresses poorly (what a hostile client can send), far above DynamoDB's 400 KB item limit.
    const requests = Array.from({ length: 5_000 }, (_, index) =>
      index < 200
        ? entry(kiosk((index % 100) + 1), index < 100 ? '1.0.0' : '1.1.0')
        : entry(randomBytes(192).toString('base64url'), '1.0.0'),
    );
    const body = { note: 'large idempotent batch', requests };
    const before = await activeCount();

    const first = await deploy(body, 'large-batch-1');
    expect(first.response.status).toBe(200);
    expect(first.response.headers.get('idempotent-replayed')).toBeNull();
    expect(expectOk(first).items).toHaveLength(5_000);
    expect(expectOk(first).items.filter((item) => item.state === 'SUCCESS')).toHaveLength(200);
    expect(await activeCount()).toBe(before + 200);

    const retry = await deploy(body, 'large-batch-1');
    expect(retry.response.status).toBe(200);
    expect(retry.response.headers.get('idempotent-replayed')).toBe('true');
    // The same result ids: the first execution's answer, not a second execution's (which would say ALREADY_DEPLOYED).
    expect(retry.data).toEqual(first.data);
    expect(await activeCount()).toBe(before + 200);
  });
});

describe('Idempotency-Key validation', () => {
  it('refuses an empty key and a key above 255 characters with 400 naming the header, before executing anything', async () => {
    const body = { requests: [entry(kiosk(110), '1.0.0')] };
    for (const key of ['', 'k'.repeat(256)]) {
      const refused = await deploy(body, key);
      expect(refused.response.status).toBe(400);
      expect(refused.response.headers.get('content-type')).toBe('application/problem+json');
      expect(refused.error?.detail).toContain('Idempotency-Key');
      expect(refused.error).toMatchObject({ status: 400, errors: [{ path: 'Idempotency-Key', message: expect.any(String) }] });
    }
    const active = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
        params: { path: { companyId: 'acme', deviceId: kiosk(110) } },
      }),
    );
    expect(active.items).toEqual([]);

    const longest = await deploy(body, 'k'.repeat(255));
    expect(longest.response.status).toBe(200);
    expect(expectOk(longest).items[0]).toMatchObject({ state: 'SUCCESS' });
  });
});

describe('logging', () => {
  it('a request without Idempotency-Key (or with a refused empty one) logs nothing about a missing key', async () => {
    const printedBefore = local.service.output().length;
    const response = await deploy({ requests: [entry(kiosk(111), '1.0.0')] });
    expect(response.response.status).toBe(200);
    expect(expectOk(response).items[0]).toMatchObject({ state: 'SUCCESS' });
    const emptyKey = await deploy({ requests: [entry(kiosk(112), '1.0.0')] }, '');
    // The runtime prints what the handlers log, a moment after the answer: a line that is not there can only be looked
    // for after a real wait (there is no later line to wait for instead).
    await new Promise((done) => setTimeout(done, 200));
    expect(local.service.output().slice(printedBefore)).not.toMatch(/idempotency_key/i);
    expect(emptyKey.response.status).toBe(400);
  });
});
