/**
 * Benchmark child: validates one archive file with `validateScenarioArchive` through a file-backed
 * RandomAccessSource (one `fs.createReadStream` per ranged read, as the S3 adapter issues one ranged GetObject per
 * read), then prints one JSON line:
 * `{ ok, ms, cpuMs, maxRssBytes, reads, readBytes, largestReadBytes, smallReads, warmMs?, warmCpuMs?, problem? }`
 * (`smallReads`: reads of less than 4 KiB, i.e. ZIP headers; each would be one S3 GetObject request).
 * Run in its own process so that the peak RSS (`process.resourceUsage().maxRSS`) is the validation's own; `ms`,
 * `cpuMs` (user + system, all threads) and `maxRssBytes` are those of the first validation in the process.
 *
 * Usage: node --import tsx test/bench/validate-file.ts [--twice] <archive.zip>
 *          --twice validates a second time in the same process and adds warmMs / warmCpuMs (JIT and lazy
 *          initialisation done: what a warm Lambda sees).
 *        node --import tsx test/bench/validate-file.ts --baseline
 *          loads the validator and validates nothing: the process's floor, to tell the validation's memory from
 *          Node + tsx + module loading.
 * Environment: BENCH_READ_LATENCY_MS=N delays the first byte of every ranged read by N ms (profiling aid: what
 * S3's per-request latency would add; not used by `npm run bench`).
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { validateScenarioArchive } from '../../functions/core/scenarios/archive.js';
import type { RandomAccessSource } from '../../functions/core/scenarios/ports.js';

const args = process.argv.slice(2);
if (args[0] === '--baseline') {
  process.stdout.write(`${JSON.stringify({ ok: true, ms: 0, cpuMs: 0, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
  process.exit(0);
}
const twice = args[0] === '--twice';
const path = twice ? args[1] : args[0];
if (path === undefined) {
  process.stderr.write('usage: validate-file.ts [--twice] <archive.zip> | --baseline\n');
  process.exit(2);
}

const size = (await stat(path)).size;
let reads = 0;
let readBytes = 0;
let largestReadBytes = 0;
let smallReads = 0;
const latencyMs = Number(process.env.BENCH_READ_LATENCY_MS ?? 0);
const source: RandomAccessSource = {
  size,
  createReadStream(start: number, end: number) {
    reads += 1;
    readBytes += Math.max(0, end - start);
    largestReadBytes = Math.max(largestReadBytes, end - start);
    if (end - start < 4096) smallReads += 1;
    if (end <= start) return Readable.from([]);
    if (latencyMs > 0) {
      const output = new PassThrough();
      setTimeout(
        () =>
          createReadStream(path, { start, end: end - 1 })
            .on('error', (error) => output.destroy(error))
            .pipe(output),
        latencyMs,
      );
      return output;
    }
    return createReadStream(path, { start, end: end - 1 });
  },
};

/** One timed validation: wall ms, CPU ms (user + system of the whole process), and the problem if it failed. */
async function timed(): Promise<{ ms: number; cpuMs: number; problem?: unknown }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let problem: unknown;
  try {
    await validateScenarioArchive(source);
  } catch (error) {
    const details = error as { errors?: unknown; violations?: unknown };
    problem = { message: (error as Error).message, errors: details.violations ?? details.errors };
  }
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  return { ms, cpuMs: (used.user + used.system) / 1000, ...(problem === undefined ? {} : { problem }) };
}

const first = await timed();
const maxRssBytes = process.resourceUsage().maxRSS * 1024;
const counted = { reads, readBytes, largestReadBytes, smallReads };
const warm = twice && first.problem === undefined ? await timed() : undefined;
process.stdout.write(
  `${JSON.stringify({
    ok: first.problem === undefined,
    ms: first.ms,
    cpuMs: first.cpuMs,
    maxRssBytes,
    ...counted,
    ...(warm === undefined ? {} : { warmMs: warm.ms, warmCpuMs: warm.cpuMs }),
    ...(first.problem === undefined ? {} : { problem: first.problem }),
  })}\n`,
);
