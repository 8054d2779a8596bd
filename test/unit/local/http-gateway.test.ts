import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { matchRoute, ROUTES, type RouteDefinition } from '../../../functions/contract/routes.js';
import { createApiServer, toApiGatewayEvent } from '../../../functions/local/http-gateway.js';
import { verifyBearerToken } from '../../../functions/platform/auth.js';
import { handler as whoamiHandler, whoamiRoute } from './fixtures/whoami-handler.js';

function route(id: string): RouteDefinition {
  const found = ROUTES.find((candidate) => candidate.id === id);
  if (found === undefined) throw new Error(`no route ${id}`);
  return found;
}

describe('matchRoute', () => {
  it('prefers the static DEVICE route over {deviceId}', () => {
    const match = matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/DEVICE/deployments');
    expect(match).toEqual({ route: route('DeploymentsListAll'), pathParameters: { companyId: 'acme' } });
  });

  it('extracts deviceId for any other device segment', () => {
    const match = matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/acme-kiosk-0001/deployments');
    expect(match).toEqual({ route: route('DeploymentsListDevice'), pathParameters: { companyId: 'acme', deviceId: 'acme-kiosk-0001' } });
  });

  it('prefers the static DEVICE route whatever the order of the route table', () => {
    const reversed = [...ROUTES].reverse();
    const match = matchRoute(reversed, 'main', 'GET', '/companies/acme/resources/DEVICE/deployments');
    expect(match).toMatchObject({ route: { id: 'DeploymentsListAll' } });
  });

  it('matches static routes, with and without path parameters', () => {
    expect(matchRoute(ROUTES, 'main', 'GET', '/companies/globex/resources/scenarios/skeleton.zip')).toEqual({
      route: route('ScenarioSkeleton'),
      pathParameters: { companyId: 'globex' },
    });
    expect(matchRoute(ROUTES, 'main', 'GET', '/resources/search')).toEqual({ route: route('Search'), pathParameters: {} });
    expect(matchRoute(ROUTES, 'main', 'GET', '/resources/search/filters')).toEqual({ route: route('SearchFilters'), pathParameters: {} });
    // static scenario segments beat {scenarioId}
    for (const [segment, id] of [
      ['usage', 'ScenarioUsage'],
      ['skeleton.zip', 'ScenarioSkeleton'],
      ['schema.json', 'ScenarioSchema'],
      ['acme-welcome', 'ScenarioGet'],
    ]) {
      expect(matchRoute(ROUTES, 'main', 'GET', `/companies/acme/resources/scenarios/${segment}`), segment).toMatchObject({ route: { id } });
    }
    expect(matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/scenarios/acme-welcome/versions/1.1.0')).toEqual({
      route: route('ScenarioVersionGet'),
      pathParameters: { companyId: 'acme', scenarioId: 'acme-welcome', version: '1.1.0' },
    });
  });

  it('answers method-not-allowed with the methods the path supports on this address', () => {
    expect(matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/deployments')).toEqual({
      methodNotAllowed: true,
      allowedMethods: ['POST'],
    });
    expect(matchRoute(ROUTES, 'main', 'POST', '/resources/search')).toEqual({ methodNotAllowed: true, allowedMethods: ['GET'] });
    expect(matchRoute(ROUTES, 'main', 'DELETE', '/companies/acme/resources/DEVICE/deployments')).toEqual({
      methodNotAllowed: true,
      allowedMethods: ['GET'],
    });
    const both: RouteDefinition[] = [
      { id: 'A', api: 'main', method: 'POST', path: '/things/{id}', scope: null, entry: 'a.ts' },
      { id: 'B', api: 'main', method: 'GET', path: '/things/{id}', scope: null, entry: 'b.ts' },
    ];
    expect(matchRoute(both, 'main', 'PUT', '/things/1')).toEqual({ methodNotAllowed: true, allowedMethods: ['GET', 'POST'] });
  });

  it('answers undefined for an unknown path, an extra segment, a trailing slash or an empty parameter', () => {
    expect(matchRoute(ROUTES, 'main', 'GET', '/nope')).toBeUndefined();
    expect(matchRoute(ROUTES, 'main', 'GET', '/resources/search/filters/extra')).toBeUndefined();
    expect(matchRoute(ROUTES, 'main', 'GET', '/resources/search/')).toBeUndefined();
    expect(matchRoute(ROUTES, 'main', 'GET', '/companies//resources/scenarios/skeleton.zip')).toBeUndefined();
    expect(matchRoute(ROUTES, 'main', 'GET', '/')).toBeUndefined();
  });

  it('keeps the three addresses apart', () => {
    // upload route only on the upload address (the main address lists scenarios at the same path, with GET)
    expect(matchRoute(ROUTES, 'main', 'POST', '/companies/acme/resources/scenarios')).toEqual({
      methodNotAllowed: true,
      allowedMethods: ['GET'],
    });
    expect(matchRoute(ROUTES, 'main', 'GET', '/companies/acme/resources/scenarios')).toEqual({
      route: route('ScenarioList'),
      pathParameters: { companyId: 'acme' },
    });
    expect(matchRoute(ROUTES, 'upload', 'GET', '/companies/acme/resources/scenarios')).toEqual({
      methodNotAllowed: true,
      allowedMethods: ['POST'],
    });
    expect(matchRoute(ROUTES, 'upload', 'POST', '/companies/acme/resources/scenarios')).toEqual({
      route: route('ScenarioUpload'),
      pathParameters: { companyId: 'acme' },
    });
    // token only on the auth address, search only on main
    expect(matchRoute(ROUTES, 'main', 'POST', '/token')).toBeUndefined();
    expect(matchRoute(ROUTES, 'auth', 'POST', '/token')).toMatchObject({ route: { id: 'AuthToken' } });
    expect(matchRoute(ROUTES, 'auth', 'GET', '/.well-known/jwks.json')).toMatchObject({ route: { id: 'AuthJwks' } });
    expect(matchRoute(ROUTES, 'upload', 'GET', '/resources/search')).toBeUndefined();
    expect(matchRoute(ROUTES, 'auth', 'GET', '/openapi.json')).toBeUndefined();
  });

  it('is case-sensitive on static segments', () => {
    expect(matchRoute(ROUTES, 'main', 'GET', '/Resources/search')).toBeUndefined();
  });
});

/** The parts of an IncomingMessage that toApiGatewayEvent reads. */
function request(options: {
  method?: string;
  url: string;
  rawHeaders?: string[];
  remoteAddress?: string;
  httpVersion?: string;
}): IncomingMessage {
  return {
    method: options.method ?? 'GET',
    url: options.url,
    rawHeaders: options.rawHeaders ?? [],
    httpVersion: options.httpVersion ?? '1.1',
    socket: { remoteAddress: options.remoteAddress ?? '10.1.2.3' },
  } as unknown as IncomingMessage;
}

describe('toApiGatewayEvent', () => {
  const search = route('Search');
  const deploy = route('DeploymentsExecute');
  const upload = route('ScenarioUpload');

  it('joins repeated query parameters with commas and keeps the raw query string', () => {
    const event = toApiGatewayEvent(
      request({ url: '/resources/search?connection.state=CONNECTED&connection.state=UNKNOWN&page=2&global=a%20b' }),
      Buffer.alloc(0),
      search,
      {},
    );
    expect(event.queryStringParameters).toEqual({ 'connection.state': 'CONNECTED,UNKNOWN', page: '2', global: 'a b' });
    expect(event.rawQueryString).toBe('connection.state=CONNECTED&connection.state=UNKNOWN&page=2&global=a%20b');
    expect(event.rawPath).toBe('/resources/search');
    expect(event.requestContext.http.path).toBe('/resources/search');
  });

  it('omits queryStringParameters and pathParameters when there are none', () => {
    const event = toApiGatewayEvent(request({ url: '/resources/search' }), Buffer.alloc(0), search, {});
    expect(event.rawQueryString).toBe('');
    expect(event).not.toHaveProperty('queryStringParameters');
    expect(event).not.toHaveProperty('pathParameters');
    expect(event).not.toHaveProperty('cookies');
    expect(event).not.toHaveProperty('body');
    expect(event.isBase64Encoded).toBe(false);
  });

  it('lower-cases header names, comma-joins repeated headers and splits cookies out', () => {
    const event = toApiGatewayEvent(
      request({
        url: '/resources/search',
        rawHeaders: [
          'Host',
          '127.0.0.1:3000',
          'Authorization',
          'Bearer abc.def.ghi',
          'X-Trace',
          'one',
          'x-trace',
          'two',
          'User-Agent',
          'vitest',
          'Cookie',
          'session=1; theme=dark',
        ],
      }),
      Buffer.alloc(0),
      search,
      {},
    );
    expect(event.headers).toEqual({
      host: '127.0.0.1:3000',
      authorization: 'Bearer abc.def.ghi',
      'x-trace': 'one,two',
      'user-agent': 'vitest',
    });
    expect(event.cookies).toEqual(['session=1', 'theme=dark']);
    expect(event.requestContext.domainName).toBe('127.0.0.1:3000');
    expect(event.requestContext.http.userAgent).toBe('vitest');
  });

  it('fills routeKey, method, protocol, source ip and path parameters', () => {
    const event = toApiGatewayEvent(
      request({ method: 'POST', url: '/companies/acme/resources/deployments', remoteAddress: '192.0.2.7', httpVersion: '1.0' }),
      Buffer.alloc(0),
      deploy,
      { companyId: 'acme' },
    );
    expect(event.version).toBe('2.0');
    expect(event.routeKey).toBe('POST /companies/{companyId}/resources/deployments');
    expect(event.requestContext.routeKey).toBe(event.routeKey);
    expect(event.requestContext.http).toMatchObject({ method: 'POST', protocol: 'HTTP/1.0', sourceIp: '192.0.2.7' });
    expect(event.pathParameters).toEqual({ companyId: 'acme' });
    expect(event.requestContext.stage).toBe('$default');
    expect(event.requestContext.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Math.abs(event.requestContext.timeEpoch - Date.now())).toBeLessThan(5_000);
  });

  it('gives each event its own request id', () => {
    const a = toApiGatewayEvent(request({ url: '/resources/search' }), Buffer.alloc(0), search, {});
    const b = toApiGatewayEvent(request({ url: '/resources/search' }), Buffer.alloc(0), search, {});
    expect(a.requestContext.requestId).not.toBe(b.requestContext.requestId);
  });

  it('passes a JSON body as text (UTF-8 kept) with isBase64Encoded false', () => {
    const json = JSON.stringify({ requests: [], note: 'déploiement ✓' });
    const event = toApiGatewayEvent(
      request({
        method: 'POST',
        url: '/companies/acme/resources/deployments',
        rawHeaders: ['Content-Type', 'application/json; charset=utf-8'],
      }),
      Buffer.from(json, 'utf8'),
      deploy,
      { companyId: 'acme' },
    );
    expect(event.body).toBe(json);
    expect(event.isBase64Encoded).toBe(false);
  });

  it('treats +json media types and text/* as text', () => {
    for (const contentType of ['application/problem+json', 'text/plain', 'application/x-www-form-urlencoded']) {
      const event = toApiGatewayEvent(
        request({ method: 'POST', url: '/token', rawHeaders: ['content-type', contentType] }),
        Buffer.from('a=b'),
        route('AuthToken'),
        {},
      );
      expect(event.isBase64Encoded, contentType).toBe(false);
      expect(event.body).toBe('a=b');
    }
  });

  it('base64-encodes a binary body (zip, multipart, no content type) byte for byte', () => {
    const bytes = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0xff, 0xfe, 0x80]);
    for (const rawHeaders of [['Content-Type', 'application/zip'], ['Content-Type', 'multipart/form-data; boundary=x'], []]) {
      const event = toApiGatewayEvent(request({ method: 'POST', url: '/companies/acme/resources/scenarios', rawHeaders }), bytes, upload, {
        companyId: 'acme',
      });
      expect(event.isBase64Encoded).toBe(true);
      expect(Buffer.from(event.body ?? '', 'base64').equals(bytes)).toBe(true);
    }
  });
});

describe('createApiServer: the Lambda invocation payload limit', () => {
  let server: Server | undefined;
  let directory: string | undefined;
  afterEach(async () => {
    if (server !== undefined) await new Promise((done) => server?.close(done));
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    server = undefined;
    directory = undefined;
  });

  /** A server for one POST route whose handler answers the body length it received. */
  async function echoServer(): Promise<string> {
    directory = await mkdtemp(join(tmpdir(), 'gateway-'));
    await writeFile(
      join(directory, 'echo.mjs'),
      'export const handler = async (event) => ({ statusCode: 200, body: String((event.body ?? "").length) });\n',
    );
    const echo: RouteDefinition = { id: 'Echo', api: 'main', method: 'POST', path: '/echo', scope: null, entry: 'echo.mjs' };
    server = createApiServer('main', [echo], directory, () => undefined);
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/echo`;
  }

  it('refuses with 413 a text body that JSON escaping grows past 6 MiB, and passes one that stays under', async () => {
    const url = await echoServer();
    // 1.1 MB of U+0001 is 6.6 MB once escaped as \u0001 in the event: over the limit although the body is small.
    const escaped = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '\u0001'.repeat(1_100_000) });
    expect(escaped.status).toBe(413);
    expect(escaped.headers.get('content-type')).toBe('application/problem+json');
    expect(((await escaped.json()) as { detail: string }).detail).toMatch(/6291456-byte Lambda invocation payload limit/);
    // 3 MB of plain letters stays 3 MB in the event.
    const plain = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'a'.repeat(3_000_000) });
    expect(plain.status).toBe(200);
    expect(await plain.text()).toBe('3000000');
  });
});

describe('createApiServer: answers before any handler', () => {
  let server: Server | undefined;
  afterEach(async () => {
    if (server !== undefined) await new Promise((done) => server?.close(done));
    server = undefined;
  });

  /** A server on a free port for `api` with the real route table; no handler is ever invoked by these tests. */
  async function listening(
    api: 'main' | 'upload' | 'auth',
    addresses: Partial<Record<'main' | 'upload' | 'auth', string>> = {},
  ): Promise<string> {
    server = createApiServer(api, ROUTES, '/nonexistent', () => undefined, addresses);
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  /** Sends raw bytes and resolves with everything the server wrote before closing the connection. */
  function raw(base: string, request: string): Promise<string> {
    const { hostname, port } = new URL(base);
    return new Promise((done, fail) => {
      const socket = connect(Number(port), hostname, () => socket.end(request));
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
      });
      socket.on('close', () => done(received));
      socket.on('error', fail);
    });
  }

  it('answers 405 with an Allow header listing the methods of the path', async () => {
    const base = await listening('main');
    const response = await fetch(`${base}/resources/search`, { method: 'DELETE' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(((await response.json()) as { detail: string }).detail).toBe('DELETE is not allowed on /resources/search; allowed: GET.');
  });

  it('answers 404 naming the address that serves a route sent to the wrong one', async () => {
    const main = await listening('main', { upload: 'http://127.0.0.1:3001' });
    const upload = await fetch(`${main}/companies/acme/resources/scenarios`, { method: 'POST', body: 'x' });
    expect(upload.status).toBe(404);
    expect(upload.headers.get('content-type')).toBe('application/problem+json');
    expect(((await upload.json()) as { detail: string }).detail).toBe(
      'POST /companies/{companyId}/resources/scenarios is served by the upload address (scenario_upload_url), http://127.0.0.1:3001, not by the main address (base_url); send the request there.',
    );
    // An address that was not passed is still named, without its URL.
    const token = await fetch(`${main}/token`, { method: 'POST' });
    expect(token.status).toBe(404);
    expect(((await token.json()) as { detail: string }).detail).toMatch(/^POST \/token is served by the auth address \(auth_url\), not by/);
    // A path no address serves keeps the plain 404.
    const nowhere = await fetch(`${main}/nowhere`);
    expect(nowhere.status).toBe(404);
    expect(((await nowhere.json()) as { detail: string }).detail).toBe('No route for GET /nowhere on this address.');
  });

  it('answers 404 naming the main address for a main route sent to the upload address', async () => {
    const upload = await listening('upload', { main: 'http://127.0.0.1:3000' });
    const response = await fetch(`${upload}/companies/acme/resources/scenarios?page=1`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { detail: string }).detail).toMatch(
      /^GET \/companies\/\{companyId\}\/resources\/scenarios is served by the main address \(base_url\), http:\/\/127\.0\.0\.1:3000, /,
    );
  });

  it('answers 431 with a problem+json body to headers above 16 KiB, and 400 to a malformed request, then keeps serving', async () => {
    const base = await listening('main');
    const huge = await fetch(`${base}/resources/search`, { headers: { authorization: `Bearer ${'a'.repeat(20 * 1024)}` } });
    expect(huge.status).toBe(431);
    expect(huge.headers.get('content-type')).toBe('application/problem+json');
    expect(await huge.json()).toMatchObject({
      status: 431,
      title: 'Request Header Fields Too Large',
      detail: expect.stringMatching(/16 KiB/),
    });

    const garbled = await raw(base, 'GET /resources/search HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n');
    expect(garbled).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(garbled).toContain('content-type: application/problem+json');
    expect(JSON.parse(garbled.slice(garbled.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, title: 'Bad Request' });

    expect((await fetch(`${base}/nowhere`)).status).toBe(404);
  });
});

describe('createApiServer: the JWT authorizer of routes with a scope', () => {
  const ISSUER = 'https://issuer.test';
  const AUDIENCE = 'device-scenario-service';
  const REPO_ROOT = resolve(import.meta.dirname, '../../..');
  const whoami: RouteDefinition = whoamiRoute;
  type RecordingHandler = ((event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2>) & {
    calls: APIGatewayProxyEventV2[];
  };
  let jwks: Server;
  let gateway: Server;
  let base: string;
  let recorded: RecordingHandler;
  let sign: (claims: Record<string, unknown>) => Promise<string>;

  beforeAll(async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'test-key', alg: 'ES256', use: 'sig' };
    jwks = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ keys: [jwk] }));
    });
    await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done));
    Object.assign(process.env, {
      JWT_ISSUER: ISSUER,
      JWT_AUDIENCE: AUDIENCE,
      JWKS_URL: `http://127.0.0.1:${(jwks.address() as AddressInfo).port}/.well-known/jwks.json`,
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    });
    sign = (claims) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setSubject('olivia')
        .setIssuedAt()
        .setExpirationTime('1h')
        .sign(privateKey);
    gateway = createApiServer('main', [whoami], REPO_ROOT, () => undefined);
    await new Promise<void>((done) => gateway.listen(0, '127.0.0.1', done));
    base = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    // The module instance the gateway invokes (loadHandler loads each entry once).
    // The fixture module itself (the gateway's loader wraps its handler in an invocation context).
    recorded = whoamiHandler;
  });

  afterAll(async () => {
    await new Promise((done) => gateway?.close(done));
    await new Promise((done) => jwks?.close(done));
  });

  /**
   * Sends the head of a POST announcing a 1 MB body and only its first bytes, and resolves with the answer: a server
   * that waited for the body would never answer (the helper then fails after 5 s).
   */
  function answerBeforeBody(authorization: string | undefined): Promise<{ status: number; head: string; body: Record<string, unknown> }> {
    const { hostname, port } = new URL(base);
    return new Promise((done, fail) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(
          `POST /companies/acme/whoami HTTP/1.1\r\nHost: x\r\n${authorization === undefined ? '' : `Authorization: ${authorization}\r\n`}` +
            'Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"partial":',
        );
      });
      const timer = setTimeout(() => {
        socket.destroy();
        fail(new Error('no answer before the body was complete'));
      }, 5_000);
      let received = '';
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        const end = received.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(received)?.[1] ?? NaN);
        if (end < 0 || Buffer.byteLength(received.slice(end + 4)) < length) return;
        clearTimeout(timer);
        socket.destroy();
        done({
          status: Number(received.slice(9, 12)),
          head: received.slice(0, end),
          body: JSON.parse(received.slice(end + 4)) as Record<string, unknown>,
        });
      });
      socket.on('error', fail);
    });
  }

  it("passes the verified claims in API Gateway's shape, and the handler reads the caller the gateway verified", async () => {
    const token = await sign({ companies: ['acme', 'globex'], scope: 'search:read scenarios:read' });
    const before = recorded.calls.length;
    const response = await fetch(`${base}/companies/acme/whoami`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: '{}',
    });
    expect(response.status).toBe(200);
    const { principal } = await verifyBearerToken(`Bearer ${token}`);
    expect(await response.json()).toEqual({
      subject: principal.subject,
      companies: [...principal.companies],
      scopes: [...principal.scopes].sort(),
    });
    expect(principal).toMatchObject({ subject: 'olivia', companies: ['acme', 'globex'] });
    expect(recorded.calls).toHaveLength(before + 1);
    const authorizer = (recorded.calls.at(-1)?.requestContext as { authorizer?: unknown } | undefined)?.authorizer;
    expect(authorizer).toEqual({
      jwt: {
        claims: {
          sub: 'olivia',
          iss: ISSUER,
          aud: AUDIENCE,
          companies: '[acme globex]',
          scope: 'search:read scenarios:read',
          iat: expect.stringMatching(/^\d+$/),
          exp: expect.stringMatching(/^\d+$/),
        },
        scopes: ['search:read', 'scenarios:read'],
      },
    });
  });

  it("answers 403 to a valid token without the route's scope, before the body arrives and without invoking the handler", async () => {
    const token = await sign({ companies: ['acme'], scope: 'scenarios:read' });
    const before = recorded.calls.length;
    const refused = await answerBeforeBody(`Bearer ${token}`);
    expect(refused.status).toBe(403);
    expect(refused.head).toMatch(/content-type: application\/problem\+json/i);
    expect(refused.body).toMatchObject({
      status: 403,
      title: 'Forbidden',
      detail: expect.stringMatching(/'search:read'/),
      instance: '/companies/acme/whoami',
    });
    expect(recorded.calls).toHaveLength(before);
  });

  it('answers 401 with WWW-Authenticate to a missing, malformed or forged token, before the body arrives and without invoking the handler', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const forged = await new SignJWT({ companies: ['acme'], scope: 'search:read' })
      .setProtectedHeader({ alg: 'ES256', kid: 'test-key' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setSubject('mallory')
      .setIssuedAt()
      .setExpirationTime('1h')
      .sign(privateKey);
    const before = recorded.calls.length;
    for (const [authorization, header] of [
      [undefined, /www-authenticate: Bearer\r?$/im],
      ['Bearer garbage', /www-authenticate: Bearer error="invalid_request"/i],
      [`Bearer ${forged}`, /www-authenticate: Bearer error="invalid_token"/i],
    ] as const) {
      const refused = await answerBeforeBody(authorization);
      expect(refused.status, authorization).toBe(401);
      expect(refused.head, authorization).toMatch(header);
      expect(refused.body, authorization).toMatchObject({ status: 401, title: 'Unauthorized', instance: '/companies/acme/whoami' });
    }
    expect(recorded.calls).toHaveLength(before);
  });

  it('a handler invoked without the authorizer context (not through the gateway) answers 401 problem+json', async () => {
    const event: APIGatewayProxyEventV2 = {
      version: '2.0',
      routeKey: 'POST /companies/{companyId}/whoami',
      rawPath: '/companies/acme/whoami',
      rawQueryString: '',
      headers: { authorization: `Bearer ${await sign({ companies: ['acme'], scope: 'search:read' })}` },
      pathParameters: { companyId: 'acme' },
      requestContext: {
        accountId: 'test',
        apiId: 'main',
        domainName: 'localhost',
        domainPrefix: 'localhost',
        http: { method: 'POST', path: '/companies/acme/whoami', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'vitest' },
        requestId: 'request-1',
        routeKey: 'POST /companies/{companyId}/whoami',
        stage: '$default',
        time: new Date().toUTCString(),
        timeEpoch: Date.now(),
      },
      isBase64Encoded: false,
    };
    const result = await recorded(event, { getRemainingTimeInMillis: () => 30_000, awsRequestId: 'request-1' } as unknown as Context);
    expect(result.statusCode).toBe(401);
    expect(result.headers).toMatchObject({ 'content-type': 'application/problem+json', 'WWW-Authenticate': 'Bearer' });
    expect(JSON.parse(result.body ?? '{}')).toMatchObject({ status: 401, detail: expect.stringMatching(/Authorization: Bearer/) });
  });
});

describe('guardUncaughtErrors', () => {
  let child: ChildProcess | undefined;
  let directory: string | undefined;
  afterEach(async () => {
    if (child !== undefined && child.exitCode === null) {
      const exited = new Promise((done) => child?.once('exit', done));
      child.kill('SIGKILL');
      await exited;
    }
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    child = undefined;
    directory = undefined;
  });

  // In its own process: vitest reports any uncaught error of its workers as a failure of the run.
  it('answers 500 to a request whose handler fails outside its promise and keeps the process serving', { timeout: 30_000 }, async () => {
    directory = await mkdtemp(join(tmpdir(), 'gateway-guard-'));
    await writeFile(
      join(directory, 'stray.mjs'),
      [
        "import { EventEmitter } from 'node:events';",
        // An `error` event nobody listens to, emitted after the handler's promise settled: what busboy did.
        "export const handler = async () => { const emitter = new EventEmitter(); setTimeout(() => emitter.emit('error', new Error('stray')), 10); return new Promise(() => undefined); };",
      ].join('\n'),
    );
    await writeFile(join(directory, 'throws.mjs'), "export const handler = async () => { throw new Error('thrown'); };\n");
    await writeFile(join(directory, 'ok.mjs'), "export const handler = async () => ({ statusCode: 200, body: 'ok' });\n");
    const gateway = pathToFileURL(resolve(import.meta.dirname, '../../../functions/local/http-gateway.ts')).href;
    await writeFile(
      join(directory, 'main.ts'),
      [
        `import { createApiServer, guardUncaughtErrors } from ${JSON.stringify(gateway)};`,
        'guardUncaughtErrors((message) => process.stderr.write(`${message}\\n`));',
        "const routes = ['stray', 'throws', 'ok'].map((name) => ({ id: name, api: 'main' as const, method: 'GET' as const, path: `/${name}`, entry: `${name}.mjs` }));",
        `const server = createApiServer('main', routes, ${JSON.stringify(directory)}, (error) => process.stderr.write(\`handler error: \${(error as Error).message}\\n\`));`,
        "server.listen(0, '127.0.0.1', () => process.stdout.write(`PORT ${(server.address() as { port: number }).port}\\n`));",
      ].join('\n'),
    );
    child = spawn(process.execPath, ['--import', 'tsx', join(directory, 'main.ts')], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const deadline = Date.now() + 20_000;
    while (!/PORT \d+/.test(output)) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`gateway did not start:\n${output}`);
      await new Promise((done) => setTimeout(done, 50));
    }
    const base = `http://127.0.0.1:${/PORT (\d+)/.exec(output)?.[1]}`;
    const stray = await fetch(`${base}/stray`);
    expect(stray.status).toBe(500);
    expect(stray.headers.get('content-type')).toBe('application/problem+json');
    expect((await fetch(`${base}/throws`)).status).toBe(500);
    const ok = await fetch(`${base}/ok`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('ok');
    expect(child.exitCode).toBeNull();
    expect(output).toContain('handler error: stray');
  });
});

describe('createApiServer: admission (requests in flight and the wait for a place)', () => {
  let server: Server | undefined;
  let directory: string | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    if (server !== undefined) await new Promise((done) => server?.close(done));
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
    server = undefined;
    directory = undefined;
  });

  /** What the slow handler module shares with the test through globalThis: invocations, and how to finish them. */
  interface SlowHandlers {
    invoked: number;
    /** Resolves each pending invocation (in order) with 200 and its request path. */
    finish: (() => void)[];
    /** Resolved when `invoked` reaches `count`. */
    waiters: { count: number; done: () => void }[];
  }
  const slow = () => (globalThis as unknown as { slowHandlers: SlowHandlers }).slowHandlers;

  /** Resolves once the slow handler has been invoked `count` times in all. */
  const invocations = (count: number) =>
    new Promise<void>((done) => {
      if (slow().invoked >= count) done();
      else slow().waiters.push({ count, done });
    });

  /**
   * A gateway whose one route's handler answers only when the test finishes it, admitting 2 requests at once and 1
   * waiting; the wait's timer is the test's own (`expire()` runs it as if its delay had passed).
   */
  async function saturable(): Promise<{
    url: string;
    delays: () => number[];
    expire: () => void;
    scheduled: (count: number) => Promise<void>;
  }> {
    (globalThis as unknown as { slowHandlers: SlowHandlers }).slowHandlers = { invoked: 0, finish: [], waiters: [] };
    directory = await mkdtemp(join(tmpdir(), 'gateway-admission-'));
    await writeFile(
      join(directory, 'slow.mjs'),
      [
        'export const handler = (event) => new Promise((resolve) => {',
        '  const state = globalThis.slowHandlers;',
        '  state.finish.push(() => resolve({ statusCode: 200, body: event.rawPath }));',
        '  state.invoked += 1;',
        '  for (const waiter of state.waiters.filter((item) => item.count <= state.invoked)) waiter.done();',
        '});',
      ].join('\n'),
    );
    const route: RouteDefinition = { id: 'Slow', api: 'main', method: 'GET', path: '/slow/{n}', scope: null, entry: 'slow.mjs' };
    const timers: { callback: () => void; ms: number; cleared: boolean }[] = [];
    const scheduledWaiters: { count: number; done: () => void }[] = [];
    const clock = {
      now: () => 0,
      setTimeout: (callback: () => void, ms: number) => {
        const timer = { callback, ms, cleared: false };
        timers.push(timer);
        for (const waiter of scheduledWaiters.filter((item) => item.count <= timers.length)) waiter.done();
        return timer;
      },
      clearTimeout: (timer: unknown) => {
        (timer as { cleared: boolean }).cleared = true;
      },
    };
    server = createApiServer('main', [route], directory, () => undefined, {}, { maxInFlight: 2, maxQueued: 1, maxWaitMs: 1_000, clock });
    await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/slow`,
      delays: () => timers.map((timer) => timer.ms),
      expire: () => {
        for (const timer of timers.filter((item) => !item.cleared)) {
          timer.cleared = true;
          timer.callback();
        }
      },
      scheduled: (count) =>
        new Promise<void>((done) => {
          if (timers.length >= count) done();
          else scheduledWaiters.push({ count, done });
        }),
    };
  }

  /** Resolves once a third request waits for a place; fails at once should the gateway invoke it instead. */
  const queued = (gateway: { scheduled: (count: number) => Promise<void> }) =>
    Promise.race([
      gateway.scheduled(1),
      invocations(3).then(() => {
        throw new Error('the third request was invoked although two were in flight');
      }),
    ]);

  /**
   * Sends a GET and resolves with its status, Retry-After and body (as text), however long it takes; status 0 when the
   * connection closes unanswered (a failed test's server closing under it).
   */
  const get = async (url: string) => {
    try {
      const response = await fetch(url);
      const { status, headers } = response;
      return { status, retryAfter: headers.get('retry-after'), type: headers.get('content-type'), body: await response.text() };
    } catch {
      return { status: 0, retryAfter: null, type: null, body: '' };
    }
  };

  it('answers 503 with Retry-After, without invoking the handler, to a request beyond the places and the queue, and to one whose wait expires; the admitted ones complete', async () => {
    const gateway = await saturable();
    // Two requests take both places.
    const first = get(`${gateway.url}/1`);
    const second = get(`${gateway.url}/2`);
    await invocations(2);
    // A third waits for a place (its wait's timer is scheduled), a fourth finds the queue full.
    const third = get(`${gateway.url}/3`);
    await queued(gateway);
    const fourth = await Promise.race([get(`${gateway.url}/4`), invocations(3).then(() => 'invoked' as const)]);
    expect(fourth).not.toBe('invoked');
    expect(fourth).toMatchObject({ status: 503, retryAfter: '1', type: 'application/problem+json' });
    expect(JSON.parse((fourth as { body: string }).body)).toMatchObject({
      status: 503,
      title: 'Service Unavailable',
      detail: expect.stringMatching(/Retry after 1 s/),
      instance: '/slow/4',
    });
    // The third's wait runs out after the bound it asked for: 503 too, and the handler still ran only twice.
    expect(gateway.delays()).toEqual([1_000]);
    gateway.expire();
    expect(await third).toMatchObject({ status: 503, retryAfter: '1' });
    expect(slow().invoked).toBe(2);
    // The admitted ones complete; then the places are free again.
    for (const finish of slow().finish.splice(0)) finish();
    expect(await first).toMatchObject({ status: 200, body: '/slow/1' });
    expect(await second).toMatchObject({ status: 200, body: '/slow/2' });
    const fifth = get(`${gateway.url}/5`);
    await invocations(3);
    for (const finish of slow().finish.splice(0)) finish();
    expect(await fifth).toMatchObject({ status: 200, body: '/slow/5' });
  });

  it('admits a waiting request as soon as a place frees, before its wait runs out', async () => {
    const gateway = await saturable();
    const first = get(`${gateway.url}/1`);
    const second = get(`${gateway.url}/2`);
    await invocations(2);
    const third = get(`${gateway.url}/3`);
    await queued(gateway);
    slow().finish.shift()?.();
    expect(await first).toMatchObject({ status: 200 });
    await invocations(3);
    for (const finish of slow().finish.splice(0)) finish();
    expect(await third).toMatchObject({ status: 200, body: '/slow/3' });
    expect(await second).toMatchObject({ status: 200 });
    // Its wait was cancelled: running the timers now refuses nothing.
    gateway.expire();
    expect(slow().invoked).toBe(3);
  });
});
