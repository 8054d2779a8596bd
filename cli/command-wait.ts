/**
 * Following a command run on a device until it is final (`dss command run --wait`): its address read again with a
 * bounded backoff, each change of state shown, a transient failure of a read tried again at the next one.
 */
import { ApiError, type components } from '../client/index.js';

/** A command as the service answers it. */
export type DeviceCommand = components['schemas']['Command'];

/** The states a command leaves: it is not final in them. */
const PENDING_STATES: ReadonlySet<string> = new Set(['QUEUED', 'DELIVERED']);

/** First wait between two reads, ms. */
export const FIRST_POLL_DELAY_MS = 500;
/** Longest wait between two reads, ms: a command that takes long is still seen final within this of its end. */
export const MAX_POLL_DELAY_MS = 5_000;
/** Reads in a row that may fail (503, 429, no connection) before the wait gives up with the last failure. */
export const MAX_FAILED_READS = 5;

/** Whether a command's state is one it may still leave (QUEUED, DELIVERED). */
export function isPendingState(state: string): boolean {
  return PENDING_STATES.has(state);
}

/** The wait after one of `previousMs`: half as long again, at most MAX_POLL_DELAY_MS. */
export function nextPollDelay(previousMs: number): number {
  return Math.min(MAX_POLL_DELAY_MS, Math.round(previousMs * 1.5));
}

/** What waitForFinal needs: how to read the command again, what to do on each change, how to wait. */
export interface WaitDependencies {
  /** Reads the command. @throws ApiError or a connection failure (TypeError) */
  read(): Promise<DeviceCommand>;
  /** Called with the command each time its state changed since the previous read. */
  onChange(command: DeviceCommand): void;
  /** Waits `ms` milliseconds. @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Reads the command after FIRST_POLL_DELAY_MS, then after longer and longer waits (nextPollDelay) until its state is
 * final (SUCCEEDED, FAILED, EXPIRED, CANCELLED; every command becomes final by its `expiresAt` at the latest). A read
 * answered 429 or 503, or that reached no service, is tried again at the next one, up to MAX_FAILED_READS in a row.
 * @returns the command in its final state
 * @throws the failure of the last read when MAX_FAILED_READS reads in a row failed, or any other failure at once
 */
export async function waitForFinal(first: DeviceCommand, dependencies: WaitDependencies): Promise<DeviceCommand> {
  const sleep = dependencies.sleep ?? ((ms: number) => new Promise<void>((done) => setTimeout(done, ms)));
  let current = first;
  let delay = FIRST_POLL_DELAY_MS;
  let failures = 0;
  while (isPendingState(current.state)) {
    await sleep(delay);
    delay = nextPollDelay(delay);
    let read: DeviceCommand;
    try {
      read = await dependencies.read();
      failures = 0;
    } catch (error) {
      failures += 1;
      if (!isTransient(error) || failures >= MAX_FAILED_READS) throw error;
      continue;
    }
    if (read.state !== current.state) dependencies.onChange(read);
    current = read;
  }
  return current;
}

/** A failure a later read may not meet: the service busy (429, 503) or not reached (fetch's TypeError). */
function isTransient(error: unknown): boolean {
  if (error instanceof ApiError) return error.status === 429 || error.status === 503;
  return error instanceof TypeError;
}
