/**
 * End-to-end behaviour of the local gateway in front of the handlers, over real HTTP against one local service on
 * free (non-default) ports: malformed multipart bodies, authorization before the body is parsed, 405 with Allow,
 * routes sent to the wrong address, oversized headers, the addresses named by the OpenAPI document, and capped
 * `errors` lists. Those requests are hand-built (`call`, fetch, a raw socket) on purpose: the typed client cannot
 * send them; it sends the well-formed controls.
 */
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectOk } from '../../client/index.js';
import { call, clientFor, useLocalService } from './harness.js';

const local = useLocalService({ users: ['alice', 'bob', 'olivia'] });

/** A multipart body whose only part ends before its closing boundary (75 bytes). */
const TRUNCATED_PART = '--x\r\nContent-Disposition: form-data; name="payload"; filename="a.zip"\r\n\r\nPK';

function postTruncatedPart(token: string, company: string) {
  return call(`${local.service.upload}/companies/${company}/resources/scenarios`, {
    method: 'POST',
    token,
    body: TRUNCATED_PART,
    headers: { 'content-type': 'multipart/form-data; boundary=x' },
  });
}

describe('a multipart part cut short', () => {
  it('answers 400 problem+json and the service keeps answering', async () => {
    const refused = await postTruncatedPart(local.tokens.alice, 'acme');
    expect(refused.status).toBe(400);
    expect(refused.headers.get('content-type')).toBe('application/problem+json');
    expect(refused.body).toMatchObject({
      status: 400,
      detail: expect.stringMatching(/multipart\/form-data.*payload/),
      errors: [{ path: 'payload' }],
    });
    // The same listener and the others still answer.
    const dss = clientFor(local.service, local.tokens.alice);
    const upload = await dss.upload.GET('/companies/{companyId}/resources/scenarios/uploads/{uploadId}', {
      params: { path: { companyId: 'acme', uploadId: '01ARZ3NDEKTSV4RRFFQ69G5FAV' } },
    });
    expect(upload.response.status).toBe(404);
    const scenarios = await dss.main.GET('/companies/{companyId}/resources/scenarios', { params: { path: { companyId: 'acme' } } });
    expect(scenarios.response.status).toBe(200);
    expect(local.service.output()).not.toMatch(/Uncaught error|handler error/);
  });

  it('answers 403 to a token without scenarios:write, before the body is parsed', async () => {
    const refused = await postTruncatedPart(local.tokens.olivia, 'acme');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/scenarios:write/);
  });

  it('answers 403 to a token of another company, before the body is parsed', async () => {
    const refused = await postTruncatedPart(local.tokens.bob, 'acme');
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toMatch(/company 'acme'/);
  });
});

describe('routing', () => {
  it('answers 405 with Allow listing the methods of the path', async () => {
    const result = await call(`${local.service.api}/resources/search`, { method: 'DELETE', token: local.tokens.alice });
    expect(result.status).toBe(405);
    expect(result.headers.get('allow')).toBe('GET');
    expect(result.headers.get('content-type')).toBe('application/problem+json');
  });

  it('answers 404 naming the address that serves a route sent to the wrong one', async () => {
    const upload = await call(`${local.service.api}/companies/acme/resources/scenarios`, {
      method: 'POST',
      token: local.tokens.alice,
      body: TRUNCATED_PART,
    });
    expect(upload.status).toBe(404);
    expect(upload.headers.get('content-type')).toBe('application/problem+json');
    expect(upload.body.detail).toContain(
      `POST /companies/{companyId}/resources/scenarios is served by the upload address (scenario_upload_url), ${local.service.upload}`,
    );
    const list = await call(`${local.service.upload}/companies/acme/resources/scenarios`, { token: local.tokens.alice });
    expect(list.status).toBe(404);
    expect(list.body.detail).toContain(
      `GET /companies/{companyId}/resources/scenarios is served by the main address (base_url), ${local.service.api}`,
    );
    const token = await call(`${local.service.api}/token`, { json: { username: 'alice', password: 'x' } });
    expect(token.status).toBe(404);
    expect(token.body.detail).toContain(`served by the auth address (auth_url), ${local.service.auth}`);
  });
});

describe('oversized headers', () => {
  it('answers 431 with a problem+json body on all three addresses, which keep answering', async () => {
    for (const base of [local.service.api, local.service.upload, local.service.auth]) {
      const response = await fetch(`${base}/resources/search`, { headers: { authorization: `Bearer ${'a'.repeat(20 * 1024)}` } });
      expect(response.status, base).toBe(431);
      expect(response.headers.get('content-type'), base).toBe('application/problem+json');
      expect(await response.json()).toMatchObject({ status: 431, title: 'Request Header Fields Too Large' });
    }
    expect((await clientFor(local.service, local.tokens.alice).main.GET('/resources/search')).response.status).toBe(200);
  });

  it('answers 400 with a problem+json body to a request that is not valid HTTP', async () => {
    const { port } = new URL(local.service.api);
    const received = await new Promise<string>((done, fail) => {
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.end('GET /resources/search HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n'),
      );
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      socket.on('close', () => done(text));
      socket.on('error', fail);
    });
    expect(received).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4))).toMatchObject({ status: 400, title: 'Bad Request' });
  });
});

describe('openapi.json', () => {
  it('names the addresses the service listens on', async () => {
    expect(local.settings.ports.api).not.toBe(3000);
    // The document's own schema is open (`openapi: 3.1.0` and any other member): read here as the parts checked.
    const body = expectOk(await clientFor(local.service).main.GET('/openapi.json')) as unknown as {
      servers: { url: string }[];
      paths: Record<string, any>;
    };
    expect(body.servers.map((server: { url: string }) => server.url)).toEqual([local.service.api]);
    expect(body.paths['/companies/{companyId}/resources/scenarios'].post.servers[0].url).toBe(local.service.upload);
    expect(body.paths['/token'].servers[0].url).toBe(local.service.auth);
    expect(JSON.stringify(body)).not.toMatch(/127\.0\.0\.1:300[0-2]\b/);
  });
});

describe('problem bodies', () => {
  it('list 20 of 3,000 unknown query parameters, with errorCount 3000', async () => {
    // Distinct base-36 names, 2 or 3 characters: the request line stays under the 16 KiB header limit.
    const names = Array.from({ length: 3000 }, (_, index) => (index + 36).toString(36));
    const result = await call(`${local.service.api}/companies/acme/resources/DEVICE/deployments?${names.join('&')}`, {
      token: local.tokens.alice,
    });
    expect(result.status).toBe(400);
    expect(result.body.errors).toHaveLength(20);
    expect(result.body.errors[0]).toEqual({ path: '10', message: "Unknown parameter '10'. Allowed: limit, cursor." });
    expect(result.body.errorCount).toBe(3000);
    expect(result.body.detail).toMatch(/first 20 of 3000 errors.*2980 more were omitted/);
  });
});
