/**
 * Runs the `dss` CLI (bin/dss.mjs, what `npx dss` runs) as a child process against a local service, with its own
 * config folder, as a user in a terminal would; outputs and exit codes are what the tests check.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
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

/**
 * A CLI user of `service` with a config folder of its own and no login stored yet: `configDirectory` (the CLI creates
 * it on login; the caller removes it), else a fresh temporary folder.
 */
export async function dssUser(service: LocalService, options: { configDirectory?: string } = {}): Promise<DssUser> {
  const configDirectory = options.configDirectory ?? (await mkdtemp(join(tmpdir(), 'dss-cli-')));
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
  /** More environment variables for this run only (over the user's). */
  environment?: Record<string, string>;
  /** Called with the stdout read so far each time more arrives (a test may close the pipe from here). */
  onStdout?: (stdoutSoFar: string, child: ChildProcess) => void;
  /** Called with the stderr printed so far each time more arrives (a test may kill the child from here). */
  onStderr?: (stderrSoFar: string, child: ChildProcess) => void;
  /** Killed with SIGKILL after this long, ms. @default 240_000 */
  timeoutMs?: number;
}

/** Runs `dss <args>` and resolves when it exits. No DSS_* variable of the test process reaches the CLI. */
export function runDss(user: DssUser, args: readonly string[], options: DssRunOptions = {}): Promise<DssRun> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('DSS_')));
  const child = spawn(process.execPath, [DSS, ...args], {
    cwd: options.cwd ?? resolve(import.meta.dirname, '../..'),
    env: { ...inherited, ...user.environment, ...options.environment, NODE_NO_WARNINGS: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    options.onStdout?.(stdout, child);
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

/**
 * An `onStderr` that kills the run with SIGKILL (no chance to say goodbye) as soon as its stderr so far contains
 * `pattern` (a string) or matches it (a RegExp): an interruption at a known point, e.g. after the first progress line.
 */
export function killWhen(pattern: string | RegExp): NonNullable<DssRunOptions['onStderr']> {
  return (stderr, child) => {
    if (typeof pattern === 'string' ? stderr.includes(pattern) : pattern.test(stderr)) child.kill('SIGKILL');
  };
}

/** Runs `dss <args> --json`, expects exit code 0 (showing stderr otherwise) and answers stdout parsed. */
export async function dssJson<T = any>(user: DssUser, args: readonly string[], options: DssRunOptions = {}): Promise<T> {
  const run = await runDss(user, [...args, '--json'], options);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}
