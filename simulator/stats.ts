/**
 * Request statistics of the fleet simulator: per endpoint, how many requests, how many failed, and latency
 * percentiles (ms) over a bounded reservoir sample, so that a simulator left running for hours keeps constant memory.
 */

/** Latencies kept per endpoint at most; beyond, reservoir sampling keeps a uniform sample of all of them. */
const RESERVOIR_SIZE = 50_000;

/** Figures of one endpoint. */
export interface EndpointFigures {
  endpoint: string;
  requests: number;
  errors: number;
  /** Median latency, ms (NaN before the first request). */
  p50: number;
  /** 99th percentile latency, ms. */
  p99: number;
}

class EndpointStats {
  requests = 0;
  errors = 0;
  private readonly sample: number[] = [];

  record(latencyMs: number, ok: boolean): void {
    this.requests += 1;
    if (!ok) this.errors += 1;
    if (this.sample.length < RESERVOIR_SIZE) this.sample.push(latencyMs);
    else {
      const slot = Math.floor(Math.random() * this.requests);
      if (slot < RESERVOIR_SIZE) this.sample[slot] = latencyMs;
    }
  }

  percentile(fraction: number): number {
    if (this.sample.length === 0) return Number.NaN;
    const sorted = [...this.sample].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] as number;
  }
}

/** Request counts, errors and latencies by endpoint name (e.g. `PUT /device/health`). */
export class RequestStats {
  private readonly endpoints = new Map<string, EndpointStats>();

  /** Records one request of `endpoint` that took `latencyMs` (ms); `ok` false counts it as an error. */
  record(endpoint: string, latencyMs: number, ok: boolean): void {
    let stats = this.endpoints.get(endpoint);
    if (stats === undefined) {
      stats = new EndpointStats();
      this.endpoints.set(endpoint, stats);
    }
    stats.record(latencyMs, ok);
  }

  /** Every endpoint seen, in first-seen order, with its counts and p50/p99 (ms). */
  figures(): EndpointFigures[] {
    return [...this.endpoints].map(([endpoint, stats]) => ({
      endpoint,
      requests: stats.requests,
      errors: stats.errors,
      p50: stats.percentile(0.5),
      p99: stats.percentile(0.99),
    }));
  }

  /** One endpoint's figures, or undefined when it saw no request. */
  of(endpoint: string): EndpointFigures | undefined {
    return this.figures().find((figures) => figures.endpoint === endpoint);
  }

  /** Requests and errors over every endpoint. */
  totals(): { requests: number; errors: number } {
    let requests = 0;
    let errors = 0;
    for (const stats of this.endpoints.values()) {
      requests += stats.requests;
      errors += stats.errors;
    }
    return { requests, errors };
  }
}
