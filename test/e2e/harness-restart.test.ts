/**
 * The e2e harness's restart when a port of the stopped runtime was taken meanwhile (another test file's server drew
 * it): the runtime starts on new ports instead of failing, and the fixture names them.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { clientFor, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice'] });
let squatter: Server | undefined;

afterAll(async () => {
  await new Promise((done) => (squatter === undefined ? done(undefined) : squatter.close(done)));
});

describe('the harness restart', () => {
  it('starts on new ports when one of the old ones is taken while the runtime is stopped', async () => {
    const before = local.settings.ports.api;
    await local.service.stop();
    const server = createServer();
    squatter = server;
    await new Promise<void>((listening) => server.listen(before, '127.0.0.1', () => listening()));
    const restarted = await local.restart();
    expect(local.settings.ports.api).not.toBe(before);
    expect(restarted.api).toBe(`http://127.0.0.1:${local.settings.ports.api}`);
    const found = expectOk(
      await clientFor(local.service, local.tokens.alice).main.GET('/resources/search', { params: { query: { type: ['DEVICE'] } } }),
    );
    expect(found.total).toBeGreaterThan(0);
  }, 120_000);
});
