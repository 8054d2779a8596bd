import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpWebhookSender, MAX_RESPONSE_BYTES, type ResolveAll } from '../../../functions/adapters/webhook-sender.js';

interface Received {
  method: string | undefined;
  url: string | undefined;
  headers: IncomingMessage['headers'];
  body: string;
}

const servers: Server[] = [];

/** A receiver on 127.0.0.1 answering with `answer`; records what it received and the connections it accepted. */
async function receiver(answer: (response: ServerResponse, request: IncomingMessage) => void) {
  const received: Received[] = [];
  let connections = 0;
  const server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push({ method: request.method, url: request.url, headers: request.headers, body });
      answer(response, request);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return { port, received, connections: () => connections };
}

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

/** A resolver answering from a table (never the network), recording what was asked. */
function stubResolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const resolve: ResolveAll = async (hostname) => {
    asked.push(hostname);
    return (table[hostname] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}

const HEADERS = { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' };
const BODY = '{"type":"webhook.test","timestamp":"2026-12-06T10:00:00.000Z","data":{"n":"é"}}';

describe('HttpWebhookSender', () => {
  it('POSTs the body and headers to an allowed local receiver and reports its status', async () => {
    const hooks = await receiver((response) => response.writeHead(204).end());
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['127.0.0.1'] });
    const outcome = await sender.send(`http://127.0.0.1:${hooks.port}/hook?x=1`, HEADERS, BODY, 5_000);
    expect(outcome).toMatchObject({ kind: 'answered', status: 204 });
    expect(hooks.received).toEqual([
      expect.objectContaining({
        method: 'POST',
        url: '/hook?x=1',
        body: BODY,
        headers: expect.objectContaining({
          'webhook-id': 'msg_1',
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(BODY)),
        }),
      }),
    ]);
  });

  it('connects to the address its resolver gave for localhost, when allowed', async () => {
    const hooks = await receiver((response) => response.writeHead(200).end('ok'));
    const dns = stubResolver({ localhost: ['127.0.0.1'] });
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['localhost'], resolve: dns.resolve });
    expect(await sender.send(`http://localhost:${hooks.port}/`, HEADERS, BODY, 5_000)).toMatchObject({ kind: 'answered', status: 200 });
    expect(dns.asked).toEqual(['localhost']);
    expect(hooks.received).toHaveLength(1);
  });

  it('lets another allowed name use http but never reach loopback (a name its owner points at 127.0.0.1)', async () => {
    const hooks = await receiver((response) => response.writeHead(200).end('ok'));
    const dns = stubResolver({ 'receiver.test': ['127.0.0.1'] });
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['receiver.test'], resolve: dns.resolve });
    expect(await sender.send(`http://receiver.test:${hooks.port}/`, HEADERS, BODY, 5_000)).toEqual({
      kind: 'refused',
      reason: 'refused: 127.0.0.1 is a loopback address (receiver.test)',
    });
    expect(hooks.received).toHaveLength(0);
  });

  it.each([
    ['169.254.169.254', 'refused: 169.254.169.254 is a link-local/metadata address (evil.test)'],
    ['10.0.0.1', 'refused: 10.0.0.1 is a private address (evil.test)'],
    ['fd00:ec2::254', 'refused: fd00:ec2::254 is a link-local/metadata address (evil.test)'],
    ['::ffff:192.168.0.1', 'refused: ::ffff:192.168.0.1 (IPv4 192.168.0.1) is a private address (evil.test)'],
    ['127.0.0.1', 'refused: 127.0.0.1 is a loopback address (evil.test)'],
  ])('refuses a name resolving to %s at connect time, before any connection', async (address, reason) => {
    const dns = stubResolver({ 'evil.test': [address] });
    const sender = new HttpWebhookSender({ allowedHttpHosts: [], resolve: dns.resolve });
    expect(await sender.send('https://evil.test/hook', HEADERS, BODY, 5_000)).toEqual({ kind: 'refused', reason });
    expect(dns.asked).toEqual(['evil.test']);
  });

  it('refuses a name when any of its addresses is not allowed (a rebinding answer mixing public and private)', async () => {
    const dns = stubResolver({ 'rebind.test': ['93.184.216.34', '10.0.0.1'] });
    const sender = new HttpWebhookSender({ allowedHttpHosts: [], resolve: dns.resolve });
    expect(await sender.send('https://rebind.test/', HEADERS, BODY, 5_000)).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/10\.0\.0\.1 is a private address/),
    });
  });

  it('resolves at every attempt, so a name whose answer changed to a private address is refused then', async () => {
    const hooks = await receiver((response) => response.writeHead(200).end());
    const answers = [['127.0.0.1'], ['169.254.169.254']];
    const resolve: ResolveAll = async () => (answers.shift() ?? []).map((address) => ({ address, family: 4 }));
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['localhost'], resolve });
    expect(await sender.send(`http://localhost:${hooks.port}/`, HEADERS, BODY, 5_000)).toMatchObject({ kind: 'answered' });
    expect(await sender.send(`http://localhost:${hooks.port}/`, HEADERS, BODY, 5_000)).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/metadata/),
    });
    expect(hooks.received).toHaveLength(1);
  });

  it('lets an allowed host reach loopback only, not a private address', async () => {
    const dns = stubResolver({ 'receiver.test': ['192.168.1.10'] });
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['receiver.test'], resolve: dns.resolve });
    expect(await sender.send('http://receiver.test/', HEADERS, BODY, 5_000)).toMatchObject({
      kind: 'refused',
      reason: expect.stringMatching(/private/),
    });
  });

  it('refuses a literal address without resolving, and http to a host not allowed', async () => {
    const dns = stubResolver({});
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['127.0.0.1'], resolve: dns.resolve });
    expect(await sender.send('https://169.254.169.254/latest/meta-data', HEADERS, BODY, 5_000)).toEqual({
      kind: 'refused',
      reason: 'refused: 169.254.169.254 is a link-local/metadata address',
    });
    expect(await sender.send('http://[::ffff:a9fe:a9fe]/', HEADERS, BODY, 5_000)).toMatchObject({ kind: 'refused' });
    expect(await sender.send('http://hooks.example.com/', HEADERS, BODY, 5_000)).toEqual({
      kind: 'refused',
      reason: 'refused: http: is not allowed for hooks.example.com',
    });
    expect(dns.asked).toEqual([]);
  });

  it('does not follow a redirect: the 3xx is the answer', async () => {
    const other = await receiver((response) => response.writeHead(200).end());
    const hooks = await receiver((response) => response.writeHead(307, { location: `http://127.0.0.1:${other.port}/` }).end());
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['127.0.0.1'] });
    expect(await sender.send(`http://127.0.0.1:${hooks.port}/`, HEADERS, BODY, 5_000)).toMatchObject({ kind: 'answered', status: 307 });
    expect(other.received).toHaveLength(0);
  });

  it('fails an attempt whose answer does not complete within the timeout, even after its status', async () => {
    const hooks = await receiver((response) => {
      response.writeHead(200, { 'content-length': '100' });
      response.write('partial');
    });
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['127.0.0.1'] });
    const outcome = await sender.send(`http://127.0.0.1:${hooks.port}/`, HEADERS, BODY, 300);
    expect(outcome).toMatchObject({ kind: 'failed', reason: 'no complete answer within 0.3 s' });
    expect((outcome as { durationMs: number }).durationMs).toBeGreaterThanOrEqual(290);
  });

  it('reads at most a few KiB of a large answer', async () => {
    const hooks = await receiver((response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const write = () => {
        while (response.write(chunk)) {}
        response.once('drain', write);
      };
      write();
    });
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['127.0.0.1'] });
    expect(MAX_RESPONSE_BYTES).toBeLessThanOrEqual(16 * 1024);
    expect(await sender.send(`http://127.0.0.1:${hooks.port}/`, HEADERS, BODY, 2_000)).toMatchObject({ kind: 'answered', status: 200 });
  });

  it('reports a connection that could not be made', async () => {
    const hooks = await receiver((response) => response.end());
    const port = hooks.port;
    for (const server of servers.splice(0)) {
      server.close();
      await once(server, 'close');
    }
    const sender = new HttpWebhookSender({ allowedHttpHosts: ['127.0.0.1'] });
    expect(await sender.send(`http://127.0.0.1:${port}/`, HEADERS, BODY, 2_000)).toMatchObject({
      kind: 'failed',
      reason: expect.stringMatching(/^could not deliver: ECONNREFUSED/),
    });
  });
});
