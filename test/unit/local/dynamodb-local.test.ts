/**
 * DynamoDB Local's JVM does not outlive the node process that started it, even when that process crashes without
 * calling stop() (an uncaught error), so a failed `npm start` or test leaves no java process behind; a JVM that dies
 * on its own is restarted on the same data, and one stopped with stop() is not.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CreateTableCommand, DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../../functions/local/dynamodb-local.js';
import { freePort } from '../../../functions/local/free-port.js';
import { isRunning } from '../../e2e/harness.js';

const root = resolve(import.meta.dirname, '../../..');

describe('startDynamoDbLocal', () => {
  it('kills the JVM when the process that started it dies of an uncaught error', async () => {
    const dataDirectory = await mkdtemp(join(tmpdir(), 'dynamodb-local-'));
    try {
      const script = `
        import { startDynamoDbLocal } from ${JSON.stringify(join(root, 'functions/local/dynamodb-local.ts'))};
        const dynamo = await startDynamoDbLocal({ dataDirectory: ${JSON.stringify(dataDirectory)}, port: ${await freePort()} });
        console.log('JAVA ' + dynamo.pid);
        setTimeout(() => { throw new Error('crash on purpose'); }, 10);`;
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
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

  it('restarts a JVM that died on the same port and data, saying so; stop() ends it for good', async () => {
    const dataDirectory = await mkdtemp(join(tmpdir(), 'dynamodb-local-'));
    const messages: string[] = [];
    const dynamo = await startDynamoDbLocal({ dataDirectory, port: await freePort(), log: (message) => messages.push(message) });
    const client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      maxAttempts: 1,
    });
    try {
      await client.send(
        new CreateTableCommand({
          TableName: 'kept',
          BillingMode: 'PAY_PER_REQUEST',
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
        }),
      );
      const first = dynamo.pid as number;
      expect(isRunning(first)).toBe(true);
      process.kill(first, 'SIGKILL');
      const deadline = Date.now() + 60_000;
      while (!messages.some((message) => message.startsWith('DynamoDB Local is answering again')) && Date.now() < deadline) {
        await new Promise((done) => setTimeout(done, 100));
      }
      expect(messages[0]).toMatch(/^DynamoDB Local exited unexpectedly \(signal SIGKILL\); restarting on the same data/);
      expect(messages.at(-1)).toMatch(/^DynamoDB Local is answering again/);
      const second = dynamo.pid as number;
      expect(second).not.toBe(first);
      expect((await client.send(new ListTablesCommand({}))).TableNames).toEqual(['kept']);

      const before = messages.length;
      await dynamo.stop();
      expect(isRunning(second)).toBe(false);
      // What is checked is that nothing happens: a real second, in which a restart (the supervisor starts one at once
      // after an unexpected exit) would have said so.
      await new Promise((done) => setTimeout(done, 1_000));
      expect(messages.length).toBe(before);
      expect(dynamo.pid).toBeUndefined();
    } finally {
      client.destroy();
      await dynamo.stop();
      await rm(dataDirectory, { recursive: true, force: true });
    }
  }, 120_000);
});
