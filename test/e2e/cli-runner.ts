/**
 * Runs the `dss` CLI (bin/dss.mjs, what `npx dss` runs) as a child process against a local service, with its own
 * config folder, as a user in a terminal would; outputs and exit codes are what the tests check.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { LocalService } from './harness.js';

const DSS = resolve(import.meta.dirname, '../../bin/dss.mjs');

/** What one CLI run printed and how it ended. */
export interface DssRun {
  /** Exit code; null when the process was killed by a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment a user of one local service sets: its addresses and a config folder of its own. */
export interface DssUser {
  environment: Record<string, string>;
  configDirectory: string;
}

/** A CLI user of `service` with a fresh config folder (no login stored yet). */
export async function dssUser(service: LocalService): Promise<DssUser> {
  const configDirectory = await mkdtemp(join(tmpdir(), 'dss-cli-'));
  return {
    configDirectory,
    environment: {
      DSS_CONFIG_DIR: configDirectory,
      DSS_BASE_URL: service.api,
      DSS_UPLOAD_URL: service.upload,
      DSS_AUTH_URL: service.auth,
    },
  };
}

/** Options of one run. */
export interface DssRunOptions {
  /** Written to the CLI's stdin, which is then closed. */
  stdin?: string;
  cwd?: string;
  /** Called with the stderr printed so far each time more arrives (a test may kill the child from here). */
  onStderr?: (stderrSoFar: string, child: ChildProcess) => void;
  /** Killed with SIGKILL after this long, ms. @default 240_000 */
  timeoutMs?: number;
}

/** Runs `dss <args>` and resolves when it exits. */
export function runDss(user: DssUser, args: readonly string[], options: DssRunOptions = {}): Promise<DssRun> {
  const child = spawn(process.execPath, [DSS, ...args], {
    cwd: options.cwd ?? resolve(import.meta.dirname, '../..'),
    env: { ...process.env, ...user.environment, NODE_NO_WARNINGS: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    options.onStderr?.(stderr, child);
  });
  child.stdin.end(options.stdin ?? '');
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
  return new Promise((done, fail) => {
    child.once('error', fail);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr });
    });
  });
}
