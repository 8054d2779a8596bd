/**
 * How a delivery is signed (Standard Webhooks, https://www.standardwebhooks.com/): `webhook-id`, `webhook-timestamp`
 * and `webhook-signature`, an HMAC-SHA256 of `{id}.{timestamp}.{body}` keyed by the webhook's secret, so that a
 * receiver can check who sent it, that the body is intact and that it is recent.
 */
import { createHmac } from 'node:crypto';
import type { StoredWebhook } from './model.js';

/** The prefix of a webhook secret; the rest is the key, base64. */
export const SECRET_PREFIX = 'whsec_';

/**
 * The `v1,<base64>` signature of one attempt: HMAC-SHA256 of `{messageId}.{timestampSeconds}.{body}`, keyed by the
 * base64-decoded part of `secret` after `whsec_`.
 * @throws Error when `secret` does not start with `whsec_` (a stored secret always does).
 */
export function signatureOf(secret: string, messageId: string, timestampSeconds: number, body: string): string {
  if (!secret.startsWith(SECRET_PREFIX)) throw new Error('a webhook secret starts with whsec_');
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  const mac = createHmac('sha256', key).update(`${messageId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The secrets a webhook signs with: its current one, and the one before a rotation while it still signs. */
export type SigningSecrets = Pick<StoredWebhook, 'secret' | 'previousSecret' | 'previousSecretExpiresAt'>;

/**
 * The Standard Webhooks headers of one attempt made at `now`: `webhook-id` (the delivery's messageId, the same on
 * every attempt), `webhook-timestamp` (epoch seconds of the attempt) and `webhook-signature` (the current secret's
 * signature, then, space-separated, the previous secret's while `previousSecretExpiresAt` is in the future, so a
 * receiver still holding the old secret keeps verifying during a rotation).
 */
export function signedHeaders(
  secrets: SigningSecrets,
  messageId: string,
  body: string,
  now: Date,
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  const signatures = [signatureOf(secrets.secret, messageId, timestamp, body)];
  const { previousSecret, previousSecretExpiresAt } = secrets;
  if (previousSecret !== null && previousSecretExpiresAt !== null && Date.parse(previousSecretExpiresAt) > now.getTime()) {
    signatures.push(signatureOf(previousSecret, messageId, timestamp, body));
  }
  return { 'webhook-id': messageId, 'webhook-timestamp': String(timestamp), 'webhook-signature': signatures.join(' ') };
}
