import { Webhook as StandardWebhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { MAX_DELIVERY_ATTEMPTS, RETRY_SCHEDULE_MS } from '../../../functions/core/webhooks/model.js';
import { retryDelayMs } from '../../../functions/core/webhooks/schedule.js';
import { signatureOf, signedHeaders } from '../../../functions/core/webhooks/signing.js';

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
const OLD_SECRET = `whsec_${Buffer.from('fedcba9876543210fedcba9876543210').toString('base64')}`;
const BODY = JSON.stringify({
  type: 'deployment.succeeded',
  timestamp: '2026-12-06T10:00:00.000Z',
  data: { deploymentId: 'd1', note: 'é ✓' },
});

describe('signedHeaders', () => {
  const now = new Date();
  const secrets = { secret: SECRET, previousSecret: null, previousSecretExpiresAt: null };

  it('gives headers a Standard Webhooks receiver verifies with the secret', () => {
    const headers = signedHeaders(secrets, 'msg_01JABC', BODY, now);
    expect(headers['webhook-id']).toBe('msg_01JABC');
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new StandardWebhook(SECRET).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it('is refused by a receiver when the body, the id or the secret differs', () => {
    const headers = signedHeaders(secrets, 'msg_01JABC', BODY, now);
    expect(() => new StandardWebhook(SECRET).verify(`${BODY} `, headers)).toThrow(WebhookVerificationError);
    expect(() => new StandardWebhook(SECRET).verify(BODY, { ...headers, 'webhook-id': 'msg_other' })).toThrow(WebhookVerificationError);
    expect(() => new StandardWebhook(OLD_SECRET).verify(BODY, headers)).toThrow(WebhookVerificationError);
  });

  it('signs with both secrets while the previous one has not expired, so either receiver verifies', () => {
    const rotating = {
      secret: SECRET,
      previousSecret: OLD_SECRET,
      previousSecretExpiresAt: new Date(now.getTime() + 60_000).toISOString(),
    };
    const headers = signedHeaders(rotating, 'msg_1', BODY, now);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new StandardWebhook(SECRET).verify(BODY, headers)).toBeTruthy();
    expect(new StandardWebhook(OLD_SECRET).verify(BODY, headers)).toBeTruthy();
  });

  it('stops signing with the previous secret once it has expired', () => {
    const expired = { secret: SECRET, previousSecret: OLD_SECRET, previousSecretExpiresAt: new Date(now.getTime() - 1).toISOString() };
    const headers = signedHeaders(expired, 'msg_1', BODY, now);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(1);
    expect(() => new StandardWebhook(OLD_SECRET).verify(BODY, headers)).toThrow(WebhookVerificationError);
  });

  it('matches the library signature for the same id, time and body', () => {
    const at = new Date('2026-12-06T10:00:00.000Z');
    expect(signatureOf(SECRET, 'msg_x', at.getTime() / 1000, BODY)).toBe(new StandardWebhook(SECRET).sign('msg_x', at, BODY));
  });

  it('refuses a secret without its prefix', () => {
    expect(() => signatureOf('abc', 'msg_x', 1, BODY)).toThrow(/whsec_/);
  });
});

describe('retryDelayMs', () => {
  it('follows the schedule after each failed attempt, none after the last', () => {
    const middle = () => 0.5;
    expect(RETRY_SCHEDULE_MS.map((_, index) => retryDelayMs(index + 1, middle))).toEqual([...RETRY_SCHEDULE_MS]);
    expect(retryDelayMs(MAX_DELIVERY_ATTEMPTS, middle)).toBeUndefined();
  });

  it('jitters each wait by at most ±10 %', () => {
    expect(retryDelayMs(1, () => 0)).toBe(4_500);
    expect(retryDelayMs(1, () => 0.999_999)).toBe(5_500);
    expect(retryDelayMs(2, () => 0.25)).toBe(285_000);
    expect(retryDelayMs(7, () => 0)).toBe(32_400_000);
  });

  it('is scaled by the retry scale (the local runtime shortens it for tests)', () => {
    expect(retryDelayMs(2, () => 0.5, 0.001)).toBe(300);
  });
});
