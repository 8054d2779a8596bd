/**
 * DynamoDB Local's JVM does not outlive the node process that started it, even when that process crashes without
 * calling stop() (an uncaught error), so a failed `npm start` or test leaves no java process behind.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../functions/local/free-port.js';

const root = resolve(import.meta.dirname, '../..');

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startDynamoDbLocal', () => {
  it('kills the JVM when the process that started it dies of an uncaught error', async () => {
    const dataDirectory = await mkdtemp(join(tmpdir(), 'dynamodb-local-'));
    try {
      const script = `
        import { startDynamoDbLocal } from ${JSON.stringify(join(root, 'functions/local/dynamodb-local.ts'))};
        import { execSync } from 'node:child_process';
        await startDynamoDbLocal({ dataDirectory: ${JSON.stringify(dataDirectory)}, port: ${await freePort()} });
        console.log('JAVA ' + execSync('pgrep -P ' + process.pid + ' java').toString().trim());
        setTimeout(() => { throw new Error('crash on purpose'); }, 10);`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => { output += chunk.toString(); });
      child.stderr.on('data', (chunk: Buffer) => { output += chunk.toString(); });
      const code = await new Promise<number | null>((done) => child.once('exit', done));
      const javaPid = Number(/JAVA (\d+)/.exec(output)?.[1]);
      expect(Number.isInteger(javaPid), output).toBe(true);
      expect(code).not.toBe(0);
      expect(output).toContain('crash on purpose');
      const deadline = Date.now() + 5_000;
      while (isRunning(javaPid) && Date.now() < deadline) await new Promise((done) => setTimeout(done, 50));
      const survived = isRunning(javaPid);
      if (survived) process.kill(javaPid, 'SIGKILL');
      expect(survived).toBe(false);
    } finally {
      await rm(dataDirectory, { recursive: true, force: true });
    }
  }, 60_000);
});
