/**
 * An open-loop load of devices for the device benchmark (devices.ts): each device reports its health every
 * `healthMs` and pulls its desired state every `pullMs` (with `If-None-Match`), each on a fixed schedule from a random
 * phase, whether or not its previous request was answered, so that the offered rate does not fall when the service
 * slows down (a closed loop, waiting for each answer, would hide an overload by offering less). A pull that brings a
 * new deployment is followed by one INSTALLED status report. Every exchange is timed; refusals (503, 429) are kept
 * apart from what was served, and for each device the health reports it sent and which were acknowledged (204), so
 * that the registry and search can be checked against them afterwards.
 */

/** One device as set up by the fleet simulator (SimulatedFleet.sessions()). */
export interface DeviceSession {
  id: string;
  index: number;
  token: string;
  health: Record<string, unknown>;
}

/** The kinds of requests a device makes. */
export type RequestKind = 'health' | 'pull' | 'status';

/** How an exchange ended. */
type Outcome = 'served' | 'refused' | 'failed';

/** Longest wait for an answer, ms; then the request counts as failed (status 0). */
const REQUEST_TIMEOUT_MS = 30_000;

/** Percentile (0..1) of a list of numbers; NaN when empty. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] as number;
}

/** JSON with object keys sorted, so that two healths compare equal whatever order their members were stored in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A health as compared: without `updated`, which the service sets. */
export function comparableHealth(health: unknown): string {
  if (health === null || typeof health !== 'object') return canonicalJson(health);
  const { updated: _updated, ...rest } = health as Record<string, unknown>;
  return canonicalJson(rest);
}

/** Figures of one kind of request over a run. */
export interface KindFigures {
  kind: RequestKind;
  sent: number;
  served: number;
  /** Answered 503 (by the gateway's admission control, or a backend) or 429. */
  refused: number;
  /** Of `refused`: 503 whose detail is not the gateway's admission refusal (a backend that failed or timed out). */
  refusedByBackend: number;
  /** Any other answer, or none within REQUEST_TIMEOUT_MS (status 0). */
  failed: number;
  /** Latency of the served ones, ms. */
  servedP50Ms: number;
  servedP99Ms: number;
  /** Latency of the refused ones, ms. */
  refusedP50Ms: number;
  refusedP99Ms: number;
  /** Statuses answered, by status (0: no answer). */
  statuses: Record<string, number>;
}

/** What one run of the load measured. */
export interface LoadFigures {
  devices: number;
  healthIntervalMs: number;
  pullIntervalMs: number;
  /** Length of the schedule, s. */
  seconds: number;
  sent: number;
  /** Requests sent per second over the schedule. */
  offeredPerSecond: number;
  /** Requests served (2xx, 304) per second, over the schedule plus the time its last requests took to be answered. */
  servedPerSecond: number;
  /** Share of the requests sent that were refused (503, 429). */
  refusedShare: number;
  refusedP50Ms: number;
  refusedP99Ms: number;
  /** p99 latency of every request served, ms. */
  servedP99Ms: number;
  kinds: KindFigures[];
  /** Devices none of whose health reports was acknowledged. */
  devicesWithoutAcknowledgedReport: number;
  /** Devices whose pull brought a deployment they had not seen before, during this run. */
  deploymentsSeen: number;
}

/** A health report sent, and what became of it. */
interface SentReport {
  sequence: number;
  health: string;
  outcome: Outcome | 'pending';
}

interface DeviceState {
  session: DeviceSession;
  etag?: string;
  reports: SentReport[];
  handled: Set<string>;
  sawDeployment: boolean;
}

interface Exchange {
  kind: RequestKind;
  status: number;
  ms: number;
  outcome: Outcome;
  byBackend: boolean;
}

/** The devices of a benchmark, driven by run(), and what their health reports became (healthCandidates). */
export class DeviceLoad {
  private readonly states: DeviceState[];
  private sequence = 0;

  constructor(
    private readonly baseUrl: string,
    sessions: readonly DeviceSession[],
    /** Chance per report that the battery level changes (the simulator's default: 0.02). */
    private readonly healthChangeRate = 0.02,
  ) {
    this.states = sessions.map((session) => ({ session, reports: [], handled: new Set(), sawDeployment: false }));
  }

  /**
   * Runs the schedule for `seconds` and waits for every request sent to be answered (or to time out).
   * @param options.at optional action run once, `at.seconds` into the schedule (e.g. a deploy); its failure fails the run.
   */
  async run(options: {
    healthIntervalMs: number;
    pullIntervalMs: number;
    seconds: number;
    at?: { seconds: number; action: () => Promise<void> };
  }): Promise<LoadFigures> {
    const { healthIntervalMs, pullIntervalMs, seconds } = options;
    const durationMs = seconds * 1000;
    const events: { at: number; kind: 'health' | 'pull'; state: DeviceState }[] = [];
    for (const state of this.states) {
      for (const [kind, interval] of [
        ['health', healthIntervalMs],
        ['pull', pullIntervalMs],
      ] as const) {
        for (let at = Math.random() * interval; at < durationMs; at += interval) events.push({ at, kind, state });
      }
    }
    events.sort((a, b) => a.at - b.at);
    for (const state of this.states) state.sawDeployment = false;
    const exchanges: Exchange[] = [];
    const inFlight = new Set<Promise<void>>();
    const track = (promise: Promise<void>) => {
      inFlight.add(promise);
      void promise.finally(() => inFlight.delete(promise));
    };
    const started = performance.now();
    let next = 0;
    let actionDone = options.at === undefined;
    let actionFinished: Promise<void> = Promise.resolve();
    while (next < events.length) {
      const now = performance.now() - started;
      if (!actionDone && options.at !== undefined && now >= options.at.seconds * 1000) {
        actionDone = true;
        const action = options.at.action();
        // Its failure is the run's, once the run is over (not an unhandled rejection in between).
        action.catch(() => undefined);
        actionFinished = action;
        track(action);
      }
      while (next < events.length && (events[next] as { at: number }).at <= now) {
        const event = events[next] as (typeof events)[number];
        next += 1;
        track(event.kind === 'health' ? this.report(event.state, exchanges) : this.pull(event.state, exchanges));
      }
      const wait = next < events.length ? Math.min(5, (events[next] as { at: number }).at - now) : 0;
      if (wait > 0) await new Promise((done) => setTimeout(done, wait));
    }
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    await actionFinished;
    const elapsedSeconds = (performance.now() - started) / 1000;
    return this.figures(exchanges, { healthIntervalMs, pullIntervalMs, seconds, elapsedSeconds });
  }

  /**
   * The healths the registry may show for each device that had a report acknowledged: the last acknowledged one,
   * or one sent after it that was not refused by the gateway (it may have been recorded although its answer was
   * lost or failed). Devices without an acknowledged report are left out.
   */
  healthCandidates(): Map<string, Set<string>> {
    const candidates = new Map<string, Set<string>>();
    for (const state of this.states) {
      let last = -1;
      state.reports.forEach((report, position) => {
        if (report.outcome === 'served') last = position;
      });
      if (last < 0) continue;
      const allowed = new Set<string>();
      state.reports.slice(last).forEach((report, offset) => {
        if (offset === 0 || report.outcome !== 'refused') allowed.add(report.health);
      });
      candidates.set(state.session.id, allowed);
    }
    return candidates;
  }

  /**
   * Brings the fleet to its steady state, unmeasured: each device reports its health once and pulls twice (getting
   * its first ETag, then polling with it, which stores the device's tag), `concurrency` at a time; this also loads
   * every handler module the load calls.
   */
  async warmUp(concurrency = 8): Promise<void> {
    const ignored: Exchange[] = [];
    let next = 0;
    const worker = async () => {
      while (next < this.states.length) {
        const state = this.states[next++] as DeviceState;
        await this.report(state, ignored);
        await this.pull(state, ignored);
        await this.pull(state, ignored);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    this.forgetReports();
  }

  /** Resets what healthCandidates() and deploymentsSeen count, before another run. */
  forgetReports(): void {
    for (const state of this.states) state.reports = [];
  }

  private async report(state: DeviceState, exchanges: Exchange[]): Promise<void> {
    if (Math.random() < this.healthChangeRate) changeBattery(state.session.health);
    const body = JSON.stringify(state.session.health);
    const sent: SentReport = { sequence: this.sequence++, health: comparableHealth(state.session.health), outcome: 'pending' };
    state.reports.push(sent);
    const exchange = await this.exchange('health', 'PUT', '/device/health', state.session.token, { body }, [204]);
    exchanges.push(exchange);
    // Refused by the gateway: never processed. Refused by a failing backend: possibly recorded, as a failure is.
    sent.outcome = exchange.outcome === 'refused' && exchange.byBackend ? 'failed' : exchange.outcome;
    // Keep what healthCandidates needs: the last acknowledged report and those after it.
    let last = -1;
    state.reports.forEach((report, position) => {
      if (report.outcome === 'served') last = position;
    });
    if (last > 0) state.reports = state.reports.slice(last);
  }

  private async pull(state: DeviceState, exchanges: Exchange[]): Promise<void> {
    const headers: Record<string, string> = state.etag === undefined ? {} : { 'if-none-match': state.etag };
    let items: { what: { id: string; subId: string } }[] = [];
    const exchange = await this.exchange(
      'pull',
      'GET',
      '/device/deployments',
      state.session.token,
      { headers },
      [200, 304],
      async (response) => {
        if (response.status !== 200) return;
        state.etag = response.headers.get('etag') ?? undefined;
        items = ((await response.json()) as { items: typeof items }).items;
      },
    );
    exchanges.push(exchange);
    for (const item of items) {
      const key = `${item.what.id}@${item.what.subId}`;
      if (state.handled.has(key)) continue;
      state.handled.add(key);
      state.sawDeployment = true;
      const body = JSON.stringify({ what: { type: 'SCENARIO', id: item.what.id, subId: item.what.subId }, state: 'INSTALLED' });
      exchanges.push(await this.exchange('status', 'POST', '/device/deployments/status', state.session.token, { body }, [204]));
    }
  }

  private async exchange(
    kind: RequestKind,
    method: string,
    path: string,
    token: string,
    request: { body?: string; headers?: Record<string, string> },
    expected: number[],
    read: (response: Response) => Promise<void> = async (response) => {
      await response.arrayBuffer();
    },
  ): Promise<Exchange> {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...request.headers };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const started = performance.now();
    try {
      const response = await fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        ...(request.body === undefined ? {} : { body: request.body }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      if (response.status === 503 || response.status === 429) {
        const detail = ((await response.json().catch(() => ({}))) as { detail?: string }).detail ?? '';
        return {
          kind,
          status: response.status,
          ms: performance.now() - started,
          outcome: 'refused',
          byBackend: response.status === 503 && !detail.includes('as many requests as it admits'),
        };
      }
      await read(response);
      const ms = performance.now() - started;
      return { kind, status: response.status, ms, outcome: expected.includes(response.status) ? 'served' : 'failed', byBackend: false };
    } catch {
      return { kind, status: 0, ms: performance.now() - started, outcome: 'failed', byBackend: false };
    }
  }

  private figures(
    exchanges: readonly Exchange[],
    run: { healthIntervalMs: number; pullIntervalMs: number; seconds: number; elapsedSeconds: number },
  ): LoadFigures {
    const served = exchanges.filter((exchange) => exchange.outcome === 'served');
    const refused = exchanges.filter((exchange) => exchange.outcome === 'refused');
    const refusedMs = refused.map((exchange) => exchange.ms);
    const kinds = (['health', 'pull', 'status'] as const).flatMap((kind): KindFigures[] => {
      const ofKind = exchanges.filter((exchange) => exchange.kind === kind);
      if (ofKind.length === 0) return [];
      const statuses: Record<string, number> = {};
      for (const exchange of ofKind) statuses[exchange.status] = (statuses[exchange.status] ?? 0) + 1;
      const servedMs = ofKind.filter((exchange) => exchange.outcome === 'served').map((exchange) => exchange.ms);
      const refusedOfKind = ofKind.filter((exchange) => exchange.outcome === 'refused');
      const refusedMs = refusedOfKind.map((exchange) => exchange.ms);
      return [
        {
          kind,
          sent: ofKind.length,
          served: servedMs.length,
          refused: refusedOfKind.length,
          refusedByBackend: refusedOfKind.filter((exchange) => exchange.byBackend).length,
          failed: ofKind.filter((exchange) => exchange.outcome === 'failed').length,
          servedP50Ms: percentile(servedMs, 0.5),
          servedP99Ms: percentile(servedMs, 0.99),
          refusedP50Ms: percentile(refusedMs, 0.5),
          refusedP99Ms: percentile(refusedMs, 0.99),
          statuses,
        },
      ];
    });
    const acknowledged = new Set<string>();
    for (const state of this.states) if (state.reports.some((report) => report.outcome === 'served')) acknowledged.add(state.session.id);
    return {
      devices: this.states.length,
      healthIntervalMs: run.healthIntervalMs,
      pullIntervalMs: run.pullIntervalMs,
      seconds: run.seconds,
      sent: exchanges.length,
      offeredPerSecond: exchanges.length / run.seconds,
      servedPerSecond: served.length / Math.max(run.seconds, run.elapsedSeconds),
      refusedShare: exchanges.length === 0 ? 0 : refused.length / exchanges.length,
      refusedP50Ms: percentile(refusedMs, 0.5),
      refusedP99Ms: percentile(refusedMs, 0.99),
      servedP99Ms: percentile(
        served.map((exchange) => exchange.ms),
        0.99,
      ),
      kinds,
      devicesWithoutAcknowledgedReport: this.states.length - acknowledged.size,
      deploymentsSeen: this.states.filter((state) => state.sawDeployment).length,
    };
  }
}

/** Nudges the battery level of a simulated health (simulatedHealth), as a real kiosk's health drifts. */
function changeBattery(health: Record<string, unknown>): void {
  const battery = (health.hubs as { battery?: { health: { level: number } } }[] | undefined)?.find((hub) => hub.battery)?.battery;
  if (battery !== undefined) battery.health.level = (battery.health.level + 1 + Math.floor(Math.random() * 9)) % 101;
}
