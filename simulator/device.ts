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
