/** What the simulator keeps of each kiosk, what it reads of the service, and how an exchange fails. */

/** The OAuth client credentials of one device (issued once, kept in the credentials file). */
export interface DeviceCredentials {
  clientId: string;
  clientSecret: string;
}

/** One item of `GET /device/deployments`, as the simulator reads it. */
export interface DesiredItem {
  what: { type: string; id: string; subId: string };
  sha256: string;
  size: number;
  downloadUrl: string;
  status?: { state: string };
}

/** One item of the `commands` of `GET /device/deployments`: a command for one of the kiosk's sub-devices to run. */
export interface PendingCommand {
  id: string;
  /** The hub's `uid`. */
  hub: string;
  /** The sub-device's `uid` within the hub. */
  device: string;
  command: string;
  arguments: unknown;
  created: string;
  /** ISO-8601: a result reported after it is refused (409). */
  expiresAt: string;
}

/** A command's result, as `POST /device/commands/{id}/status` takes it. */
export interface CommandReport {
  state: 'SUCCEEDED' | 'FAILED';
  message?: string;
  output?: unknown;
}

/** One simulated kiosk's state: credentials, token, entity tag, health, silence and what it has handled. */
export interface SimulatedDevice {
  id: string;
  index: number;
  credentials?: DeviceCredentials;
  token?: string;
  /** Epoch ms after which the token is refreshed. */
  tokenRefreshAt: number;
  etag?: string;
  health: Record<string, unknown>;
  silentUntil: number;
  lost: boolean;
  /** `scenarioId@version` handled (being or done installing). */
  handled: Set<string>;
  /**
   * Commands received (run, being run or waiting to run), by id, each with its `expiresAt` (epoch ms): a command is
   * run once however many pulls list it, and forgotten once past its expiry, when no pull lists it any more.
   */
  commands: Map<string, number>;
  /** Results the service did not take (busy, no answer), by id: sent again before each pull until their expiry. */
  unreported: Map<string, { report: CommandReport; expiresAt: number }>;
  timers: NodeJS.Timeout[];
}

/** A failed HTTP exchange: the status (0 when no answer) and what the service said. */
export class SimulatorHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}
