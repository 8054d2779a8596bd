/**
 * The OpenSearch node's life (functions/local/opensearch-node.ts, through `npm run opensearch`): it answers on
 * 127.0.0.1 only, and it ends with the process that started it however that process ends, SIGKILL included, leaving
 * no JVM behind; the temporary folder of a node whose starter was killed is removed by the next start.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startOpenSearchNode } from '../../functions/local/opensearch-node.js';

const root = resolve(import.meta.dirname, '../..');

/** Whether a process runs (signal 0 checks without sending). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits up to `ms` for `condition`, checking every 100 ms. */
async function within(ms: number, condition: () => boolean): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (condition()) return true;
    await new Promise((done) => setTimeout(done, 100));
  }
  return condition();
}

/** Starts `npm run opensearch` (bin/opensearch.ts) and resolves with its URL and the JVM's pid once it is up. */
async function startScript(): Promise<{ child: ChildProcess; url: string; jvm: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(root, 'bin/opensearch.ts')], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const up = await within(120_000, () => /is up on (http:\S+) .*pid (\d+)\)/.test(output) || child.exitCode !== null);
  const match = /is up on (http:\S+) .*pid (\d+)\)/.exec(output);
  if (!up || match === null) throw new Error(`npm run opensearch did not come up:\n${output}`);
  return { child, url: match[1] as string, jvm: Number(match[2]) };
}

describe('the OpenSearch node', () => {
  it('binds 127.0.0.1 only and stops, leaving no process and no folder, at stop()', async () => {
    const mine = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith(`dss-opensearch-${process.pid}-`)));
    const before = mine();
    const node = await startOpenSearchNode();
    const folders = [...mine()].filter((name) => !before.has(name));
    expect(folders).toHaveLength(1);
    const nodes = (await (await fetch(`${node.url}/_nodes/http`)).json()) as {
      nodes: Record<string, { http: { bound_address: string[] } }>;
    };
    const bound = Object.values(nodes.nodes).flatMap((entry) => entry.http.bound_address);
    expect(bound.length).toBeGreaterThan(0);
    expect(bound.every((address) => address.startsWith('127.0.0.1:'))).toBe(true);
    await node.stop();
    expect(alive(node.pid)).toBe(false);
    await expect(fetch(node.url)).rejects.toThrow();
    expect(existsSync(join(tmpdir(), folders[0] as string))).toBe(false);
  });

  it('ends when the process that started it is killed with SIGKILL, and the next start removes its folder', async () => {
    const { child, url, jvm } = await startScript();
    expect((await fetch(url)).status).toBe(200);
    const folder = readdirSync(tmpdir()).find((name) => name.startsWith(`dss-opensearch-${child.pid}-`));
    expect(folder).toBeDefined();
    child.kill('SIGKILL');
    // The JVM sees its standard input end and closes the node; no signal reaches it from us.
    expect(await within(30_000, () => !alive(jvm))).toBe(true);
    await expect(fetch(url)).rejects.toThrow();

    const next = await startOpenSearchNode();
    try {
      expect(existsSync(join(tmpdir(), folder as string))).toBe(false);
    } finally {
      await next.stop();
    }
  });
});
