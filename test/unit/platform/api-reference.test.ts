/**
 * The API reference page and its script, by their handlers: the page names its script and the OpenAPI document by
 * URLs relative to itself, which reach those routes under any path prefix; its inline start-up script is the one the
 * Content-Security-Policy allows by hash; the script is Redoc's from the installed package, without the one URL it
 * would load from Redocly's CDN.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { REDOC_SCRIPT_MODULE } from '../../../functions/contract/routes/service.js';
import { matchRoute, ROUTES } from '../../../functions/contract/routes.js';
import { handler as pageHandler } from '../../../functions/handlers/api-reference.js';
import { handler as scriptHandler } from '../../../functions/handlers/api-reference-script.js';
import { REDOCLY_LOGO_URL, servedRedocScript } from '../../../functions/platform/api-reference.js';

function get(path: string): APIGatewayProxyEventV2 {
  return {
    version: '2.0',
    routeKey: `GET ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: {},
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path } },
  } as unknown as APIGatewayProxyEventV2;
}

async function page(): Promise<APIGatewayProxyStructuredResultV2> {
  return (await pageHandler(get('/docs'), {} as Context)) as APIGatewayProxyStructuredResultV2;
}

describe('GET /docs handler', () => {
  it('links its script and the document by relative URLs that reach their routes, with or without a stage prefix', async () => {
    const html = (await page()).body ?? '';
    const scripts = [...html.matchAll(/<script src="([^"]+)">/g)].map((match) => match[1] as string);
    const documents = [...html.matchAll(/Redoc\.init\("([^"]+)"/g)].map((match) => match[1] as string);
    expect(scripts).toHaveLength(1);
    expect(documents).toHaveLength(1);
    for (const prefix of ['', '/prod']) {
      const at = `https://api.example.com${prefix}/docs`;
      const routeOf = (relative: string) => {
        const { pathname } = new URL(relative, at);
        expect(pathname.startsWith(`${prefix}/`), pathname).toBe(true);
        const found = matchRoute(ROUTES, 'main', 'GET', pathname.slice(prefix.length));
        return found !== undefined && 'route' in found ? found.route.id : undefined;
      };
      expect(scripts.map(routeOf)).toEqual(['ApiReferenceScript']);
      expect(documents.map(routeOf)).toEqual(['OpenApiDocument']);
    }
    // Nothing names another origin: no absolute URL, no font or style sheet link.
    expect(html).not.toMatch(/https?:|\/\/[a-z]/i);
    expect(html).not.toMatch(/<link rel="stylesheet"/);
  });

  it('allows, by its hash, exactly the inline script the page holds, and no script from elsewhere', async () => {
    const response = await page();
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toBe('text/html; charset=utf-8');
    const policy = String(response.headers?.['content-security-policy']);
    const inline = [...(response.body ?? '').matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] as string);
    expect(inline).toHaveLength(1);
    const hash = createHash('sha256')
      .update(inline[0] as string)
      .digest('base64');
    const scriptSources = /(?:^|; )script-src ([^;]+)/.exec(policy)?.[1]?.split(' ');
    expect(scriptSources).toEqual(["'self'", `'sha256-${hash}'`]);
    expect(policy).toMatch(/(^|; )default-src 'none'(;|$)/);
  });
});

describe('GET /docs/redoc.standalone.js handler', () => {
  it("answers the installed package's script, with only Redocly's logo URL emptied", async () => {
    const response = (await scriptHandler(get('/docs/redoc.standalone.js'), {} as Context)) as APIGatewayProxyStructuredResultV2;
    expect(response.statusCode).toBe(200);
    expect(response.headers?.['content-type']).toBe('application/javascript; charset=utf-8');
    expect(response.headers?.['cache-control']).toBe('public, max-age=86400');
    const packaged = readFileSync(createRequire(import.meta.url).resolve(REDOC_SCRIPT_MODULE), 'utf8');
    // The package still holds the URL; a Redoc upgrade that moves it would make this test, and the e2e test, say so.
    expect(packaged).toContain(JSON.stringify(REDOCLY_LOGO_URL));
    expect(response.body).toBe(servedRedocScript(packaged));
    expect(response.body).not.toContain('cdn.redoc.ly');
    expect(packaged.length - (response.body ?? '').length).toBe(REDOCLY_LOGO_URL.length);
  });
});
