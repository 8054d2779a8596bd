/**
 * Benchmark step 3: one archive through the presigned upload flow of the local runtime. Starts `bin/local.ts`
 * with the e2e harness (its pid lets the peak RSS be read from /proc/<pid>/status), requests an upload slot as alice, PUTs the file streamed from disk, polls the slot until
 * STORED or REJECTED, then stops the runtime and removes its data folder.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream/promises';
import { call, type LocalService, newServiceSettings, removeDataDirectory, startService, tokenFor } from '../e2e/harness.js';

const POLL_TIMEOUT_MS = 10 * 60_000;

/** Peak and current resident set size of a process, bytes (Linux /proc); undefined elsewhere or once it exited. */
export async function memoryOf(pid: number): Promise<{ hwm: number; rss: number } | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1] ?? NaN) * 1024;
    return { hwm: field('VmHWM'), rss: field('VmRSS') };
  } catch {
    return undefined;
  }
}

/**
 * Samples a process's peak resident set size (memoryOf's `hwm`) every second until stopped.
 * @returns `peakBytes()`: the highest seen so far, bytes (0 before the first sample); `stop()` ends the sampling.
 */
export function samplePeakRss(pid: number): { peakBytes: () => number; stop: () => void } {
  let peak = 0;
  const sampler = setInterval(async () => {
    const memory = await memoryOf(pid).catch(() => undefined);
    if (memory !== undefined && memory.hwm > peak) peak = memory.hwm;
  }, 1_000);
  return { peakBytes: () => peak, stop: () => clearInterval(sampler) };
}

/** A running local runtime (the harness's LocalService carries the pid benchmarks read memory from). */
export type RunningService = LocalService;

/** PUTs a file to a (presigned) URL, streamed from disk with an explicit content-length. Resolves with the status. */
async function putFile(
  url: string,
  headers: Record<string, string>,
  path: string,
  bytes: number,
): Promise<{ status: number; body: string }> {
  const target = new URL(url);
  const send = target.protocol === 'https:' ? httpsRequest : request;
  return new Promise((done, fail) => {
    const outgoing = send(target, { method: 'PUT', headers: { ...headers, 'content-length': String(bytes) } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        body += chunk;
      });
      response.on('end', () => done({ status: response.statusCode ?? 0, body }));
      response.on('error', fail);
    });
    outgoing.on('error', fail);
    pipeline(createReadStream(path), outgoing).catch(fail);
  });
}

export interface PresignedResult {
  archiveBytes: number;
  status: string;
  /** Slot request → PUT answered, ms. */
  putMs: number;
  /** PUT answered → status STORED/REJECTED observed (polled every 250 ms), ms. */
  processMs: number;
  /** Runtime peak RSS (VmHWM) when READY, when the PUT was answered, and at the end; bytes. */
  hwmReadyBytes: number;
  hwmAfterPutBytes: number;
  hwmEndBytes: number;
  /** Highest VmRSS sampled every 100 ms during the PUT and during processing, bytes. */
  sampledPeakPutBytes: number;
  sampledPeakProcessBytes: number;
  startMs: number;
  result: unknown;
}

/** Runs the presigned flow for one archive file. Always stops the runtime and removes its data folder. */
export async function runPresigned(path: string, archiveBytes: number, log: (line: string) => void): Promise<PresignedResult> {
  const settings = await newServiceSettings();
  let service: RunningService | undefined;
  let sampler: NodeJS.Timeout | undefined;
  try {
    const startedAt = performance.now();
    service = await startService(settings);
    const startMs = performance.now() - startedAt;
    const pid = service.pid;
    const hwmReady = (await memoryOf(pid))?.hwm ?? NaN;
    log(`  runtime pid ${pid} READY in ${(startMs / 1000).toFixed(1)} s, VmHWM ${mib(hwmReady)} MiB; data dir ${settings.dataDirectory}`);

    let phase: 'put' | 'process' = 'put';
    const peaks = { put: 0, process: 0 };
    sampler = setInterval(() => {
      void memoryOf(pid).then((memory) => {
        if (memory !== undefined) peaks[phase] = Math.max(peaks[phase], memory.rss);
      });
    }, 100);

    const alice = await tokenFor(service, 'alice');
    const putStarted = performance.now();
    const slot = await call(`${service.upload}/companies/acme/resources/scenarios/uploads`, { method: 'POST', token: alice });
    if (slot.status !== 201) throw new Error(`upload slot: ${slot.status} ${JSON.stringify(slot.body)}`);
    const { uploadId, url, headers } = slot.body as { uploadId: string; url: string; headers: Record<string, string> };
    const put = await putFile(url, headers, path, archiveBytes);
    const putMs = performance.now() - putStarted;
    if (put.status !== 200) throw new Error(`PUT: ${put.status} ${put.body}`);
    const hwmAfterPut = (await memoryOf(pid))?.hwm ?? NaN;
    phase = 'process';
    log(`  PUT ${mib(archiveBytes)} MiB in ${(putMs / 1000).toFixed(1)} s; VmHWM ${mib(hwmAfterPut)} MiB; polling upload ${uploadId}`);

    const putEnded = performance.now();
    let view: { status: string; result?: unknown; problem?: unknown } = { status: 'PENDING' };
    let token = alice;
    let tokenAt = Date.now();
    while (view.status === 'PENDING') {
      if (performance.now() - putEnded > POLL_TIMEOUT_MS)
        throw new Error(`upload ${uploadId} still PENDING after ${POLL_TIMEOUT_MS / 60_000} minutes`);
      await new Promise((done) => setTimeout(done, 250));
      if (Date.now() - tokenAt > 30 * 60_000) {
        token = await tokenFor(service, 'alice');
        tokenAt = Date.now();
      }
      const answer = await call(`${service.upload}/companies/acme/resources/scenarios/uploads/${uploadId}`, { token });
      if (answer.status !== 200) throw new Error(`upload status: ${answer.status} ${JSON.stringify(answer.body)}`);
      view = answer.body;
    }
    const processMs = performance.now() - putEnded;
    clearInterval(sampler);
    sampler = undefined;
    const hwmEnd = (await memoryOf(pid))?.hwm ?? NaN;
    return {
      archiveBytes,
      status: view.status,
      putMs,
      processMs,
      hwmReadyBytes: hwmReady,
      hwmAfterPutBytes: hwmAfterPut,
      hwmEndBytes: hwmEnd,
      sampledPeakPutBytes: peaks.put,
      sampledPeakProcessBytes: peaks.process,
      startMs,
      result: view.status === 'STORED' ? view.result : view.problem,
    };
  } finally {
    if (sampler !== undefined) clearInterval(sampler);
    await service?.stop();
    await removeDataDirectory(settings);
  }
}

export function mib(bytes: number): string {
  return (bytes / 1024 ** 2).toFixed(1);
}
