/**
 * The webhooks API over the local runtime, every answer checked against the OpenAPI document: a company admin of acme
 * (invited by root) creates a webhook and sees its secret once, lists, reads, changes, rotates the secret, sends a
 * test event, follows and redelivers its delivery, and deletes the webhook, each change in the audit log; an operator reads but cannot write, a
 * viewer cannot read; another company's webhook is 404; every bound is a 400 problem naming the member. Webhook URLs
 * here name 127.0.0.1's discard port: nothing is ever sent beyond this machine.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { expectProblem, expectViolation } from './failure-paths.js';
import { call, clientFor, expectError, useLocalService } from './harness.js';

const local = useLocalService({ users: ['root', 'alice', 'olivia', 'bob'] });
const as = (token: string) => clientFor(local.service, token).main;
const NEW_PASSWORD = 'Acme-webhooks-2026!';
const HOOK_URL = 'http://127.0.0.1:9/hooks/acme';
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
let carol: string;

const acme = { path: { companyId: 'acme' } };
const hook = (webhookId: string, companyId = 'acme') => ({ params: { path: { companyId, webhookId } } });
const webhooksUrl = (suffix = '', companyId = 'acme') => `${local.service.api}/companies/${companyId}/webhooks${suffix}`;

beforeAll(async () => {
  const invited = expectOk(
    await as(local.tokens.root).POST('/admin/users', {
      body: { username: 'carol', email: 'carol@acme.example', role: 'company-admin', companies: ['acme'] },
    }),
  );
  const auth = clientFor(local.service).auth;
  const password = invited.temporaryPassword as string;
  carol = expectOk(await auth.POST('/token', { body: { username: 'carol', password, new_password: NEW_PASSWORD } })).access_token;
}, 60_000);

describe('webhooks of a company', () => {
  it('are created with their secret shown once, then listed, read, changed, rotated, tested and deleted', async () => {
    const created = await as(carol).POST('/companies/{companyId}/webhooks', {
      params: acme,
      body: { url: HOOK_URL, events: ['deployment.failed', 'device.disconnected'], description: 'On-call pager' },
    });
    expect(created.response.status).toBe(201);
    const webhook = expectOk(created);
    expect(created.response.headers.get('location')).toBe(`/companies/acme/webhooks/${webhook.id}`);
    expect(webhook).toMatchObject({ url: HOOK_URL, enabled: true, by: 'carol', failingSince: null, previousSecretExpiresAt: null });
    expect(webhook.secret).toMatch(SECRET);

    const read = expectOk(await as(carol).GET('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id)));
    const { secret, ...withoutSecret } = webhook;
    expect(read).toEqual(withoutSecret);
    const listed = expectOk(await as(carol).GET('/companies/{companyId}/webhooks', { params: acme }));
    expect(listed.items).toContainEqual(read);
    expect(JSON.stringify(listed)).not.toContain(secret);

    const changed = expectOk(
      await as(carol).PATCH('/companies/{companyId}/webhooks/{webhookId}', {
        ...hook(webhook.id),
        body: { events: ['rollout.paused'], description: null },
      }),
    );
    expect(changed).toMatchObject({ url: HOOK_URL, events: ['rollout.paused'], description: null });
    expect(changed.updated > webhook.updated).toBe(true);

    const before = Date.now();
    const rotated = expectOk(await as(carol).POST('/companies/{companyId}/webhooks/{webhookId}/secret', hook(webhook.id)));
    expect(rotated.secret).toMatch(SECRET);
    expect(rotated.secret).not.toBe(secret);
    const overlapEnds = Date.parse(rotated.previousSecretExpiresAt ?? '');
    expect(overlapEnds - before).toBeGreaterThanOrEqual(24 * 3_600_000 - 1_000);
    expect(overlapEnds - Date.now()).toBeLessThanOrEqual(24 * 3_600_000);

    const tested = await as(carol).POST('/companies/{companyId}/webhooks/{webhookId}/test', hook(webhook.id));
    expect(tested.response.status).toBe(202);
    const delivery = expectOk(tested);
    expect(delivery).toMatchObject({ type: 'webhook.test', messageId: `msg_${delivery.id}` });
    expect(tested.response.headers.get('location')).toBe(`/companies/acme/webhooks/${webhook.id}/deliveries/${delivery.id}`);
    const deliveries = expectOk(await as(carol).GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', hook(webhook.id)));
    expect(deliveries.items.map((item) => item.id)).toEqual([delivery.id]);
    const params = { params: { path: { companyId: 'acme', webhookId: webhook.id, deliveryId: delivery.id } } };
    const one = expectOk(await as(alice()).GET('/companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId}', params));
    expect(one).toMatchObject({ id: delivery.id, eventId: delivery.eventId, messageId: delivery.messageId });
    const redelivered = await as(carol).POST('/companies/{companyId}/webhooks/{webhookId}/deliveries/{deliveryId}/redeliver', params);
    expect(redelivered.response.status).toBe(202);
    expect(expectOk(redelivered)).toMatchObject({ id: delivery.id, messageId: delivery.messageId, state: 'PENDING' });

    const deleted = await as(carol).DELETE('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id));
    expect(deleted.response.status).toBe(204);
    expectError(await as(carol).GET('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id)), 404);
    expectError(await as(carol).GET('/companies/{companyId}/webhooks/{webhookId}/deliveries', hook(webhook.id)), 404);
    expectError(await as(carol).DELETE('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id)), 404);

    // Every change is in the audit log, by carol, never with a secret.
    const audit = expectOk(await as(carol).GET('/admin/audit', { params: { query: { company: 'acme' } } }));
    const entries = audit.items.filter((entry) => entry.target.kind === 'webhook' && entry.target.id === webhook.id);
    expect(entries.map((entry) => [entry.action, entry.actor])).toEqual([
      ['webhook.deleted', 'carol'],
      ['webhook.secret-rotated', 'carol'],
      ['webhook.updated', 'carol'],
      ['webhook.created', 'carol'],
    ]);
    expect(entries[2]).toMatchObject({
      before: { events: ['deployment.failed', 'device.disconnected'] },
      after: { events: ['rollout.paused'] },
    });
    expect(JSON.stringify(entries)).not.toContain('whsec_');
  });

  it('are read by operators, changed only by administrators, hidden from viewers and from other companies', async () => {
    const webhook = expectOk(
      await as(carol).POST('/companies/{companyId}/webhooks', { params: acme, body: { url: HOOK_URL, events: ['webhook.test'] } }),
    );
    expect(expectOk(await as(alice()).GET('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id))).id).toBe(webhook.id);
    expectError(
      await as(alice()).POST('/companies/{companyId}/webhooks', { params: acme, body: { url: HOOK_URL, events: ['webhook.test'] } }),
      403,
    );
    expectError(await as(alice()).POST('/companies/{companyId}/webhooks/{webhookId}/secret', hook(webhook.id)), 403);
    expectError(await as(alice()).DELETE('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id)), 403);
    expectError(await as(local.tokens.olivia).GET('/companies/{companyId}/webhooks', { params: acme }), 403);
    // bob reads globex's webhooks: acme's id there is no webhook of globex.
    expectError(await as(local.tokens.bob).GET('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id, 'globex')), 404);
    expectError(await as(carol).GET('/companies/{companyId}/webhooks', { params: { path: { companyId: 'globex' } } }), 403);
    expect(expectOk(await as(carol).GET('/companies/{companyId}/webhooks/{webhookId}', hook(webhook.id))).enabled).toBe(true);
  });

  it('refuses every bound with a 400 problem naming the member, creating nothing', async () => {
    const countBefore = expectOk(await as(carol).GET('/companies/{companyId}/webhooks', { params: acme })).items.length;
    const create = (json: unknown) => call(webhooksUrl(), { token: carol, json });
    const valid = { url: HOOK_URL, events: ['webhook.test'] };
    const cases: [unknown, string, RegExp?][] = [
      [{ ...valid, url: 'http://hooks.example.com/in' }, '/url', /https/],
      [{ ...valid, url: 'https://user:secret@hooks.example.com/in' }, '/url', /user name or password/],
      [{ ...valid, url: 'https://169.254.169.254/latest/meta-data' }, '/url', /metadata/],
      [{ ...valid, url: 'https://10.0.0.1/in' }, '/url', /private/],
      [{ ...valid, url: 'https://hooks.example.com/in#top' }, '/url', /fragment/],
      [{ ...valid, url: 'hooks.example.com/in' }, '/url', /absolute/],
      [{ ...valid, url: `https://hooks.example.com/${'a'.repeat(2048)}` }, '/url'],
      [{ ...valid, url: 'https://hooks.exam\nple.com/in' }, '/url', /control characters/],
      [{ ...valid, events: [] }, '/events'],
      [{ ...valid, events: ['device.exploded'] }, '/events/0'],
      [{ ...valid, events: ['webhook.test', 'webhook.test'] }, '/events', /twice/],
      [{ ...valid, description: 'x'.repeat(257) }, '/description'],
      [{ ...valid, description: 'two\nlines' }, '/description', /control characters/],
      [{ ...valid, secret: 'whsec_mine' }, ''],
    ];
    for (const [body, path, message] of cases) {
      const problem = expectProblem(await create(body), 400);
      if (path !== '') expectViolation(problem, path, message);
    }
    const webhook = expectOk(await as(carol).POST('/companies/{companyId}/webhooks', { params: acme, body: valid as never }));
    const patch = (json: unknown) => call(webhooksUrl(`/${webhook.id}`), { method: 'PATCH', token: carol, json });
    expectProblem(await patch({}), 400);
    expectViolation(expectProblem(await patch({ url: 'https://[::ffff:10.0.0.1]/in' }), 400), '/url', /private/);
    expectViolation(expectProblem(await patch({ enabled: 'yes' }), 400), '/enabled');
    const after = expectOk(await as(carol).GET('/companies/{companyId}/webhooks', { params: acme })).items;
    expect(after.length).toBe(countBefore + 1);
    expect(after.find((item) => item.id === webhook.id)).toMatchObject({ url: HOOK_URL, enabled: true });
  });
});

function alice(): string {
  return local.tokens.alice;
}
