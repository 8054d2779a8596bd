/**
 * When a failed delivery is tried again (docs/webhooks.md, "Delivery"): RETRY_SCHEDULE_MS after the attempt before,
 * each wait with ±RETRY_JITTER jitter so that a receiver back from an outage is not hit by every delivery at once.
 */
import { RETRY_JITTER, RETRY_SCHEDULE_MS } from './model.js';

/**
 * The wait before the next attempt of a delivery whose `attemptsMade`-th attempt (1 for the first) just failed, ms,
 * or undefined when that was the last one (the delivery is then FAILED). `random` gives [0, 1) (Math.random, or a
 * stub in tests); `scale` multiplies every wait (1 in production; a local runtime setting shortens it for tests).
 */
export function retryDelayMs(attemptsMade: number, random: () => number, scale = 1): number | undefined {
  const base = RETRY_SCHEDULE_MS[attemptsMade - 1];
  if (base === undefined) return undefined;
  const jitter = 1 + RETRY_JITTER * (2 * random() - 1);
  return Math.round(base * jitter * scale);
}
