/**
 * What the failure-path files (failure-paths-*.test.ts) share: problem+json assertions, scenario archives built by
 * hand, and deployment requests on the file's service, whose SUCCESS items are tracked to compare listings against.
 */
import JSZip from 'jszip';
import { expect } from 'vitest';
import { type components, expectOk } from '../../client/index.js';
import { answerOf, clientFor, type JsonResult, type LocalService, type TypedResult } from './harness.js';

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export const MiB = 1024 * 1024;

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: { path: string; message: string }[];
  [extension: string]: unknown;
}

/** Asserts an RFC 9457 problem with `status` and a `detail` matching `detail`; returns its body. */
export function expectProblem(answer: JsonResult | TypedResult, status: number, detail?: RegExp): Problem {
  const result = answerOf(answer);
  expect(result.status, `unexpected status; body: ${JSON.stringify(result.body)}`).toBe(status);
  expect(result.headers.get('content-type') ?? '').toMatch(/^application\/problem\+json\b/);
  const body = result.body as Problem;
  expect(body).toMatchObject({
    status,
    type: expect.stringMatching(/^https?:\/\//),
    title: expect.any(String),
    detail: expect.any(String),
  });
  expect(body.detail.length).toBeGreaterThan(10);
  if (detail !== undefined) expect(body.detail).toMatch(detail);
  return body;
}

/** Asserts a 400 problem whose `errors` has an entry at `path` (message matching `message` when given). */
export function expectViolation(problem: Problem, path: string, message?: RegExp): void {
  expect(problem.errors, `errors of ${JSON.stringify(problem)}`).toBeInstanceOf(Array);
  const found = (problem.errors ?? []).filter((error) => error.path === path);
  expect(found.length, `no violation at '${path}' in ${JSON.stringify(problem.errors)}`).toBeGreaterThan(0);
  if (message !== undefined)
    expect(
      found.some((error) => message.test(error.message)),
      `no message ${message} at '${path}': ${JSON.stringify(found)}`,
    ).toBe(true);
}

/** JSON as base64url, as the parts of a JWT and the cursors are written. */
export function base64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

export interface Manifest {
  id?: unknown;
  name?: unknown;
  version?: unknown;
  description?: unknown;
  thumbnails?: unknown;
  assets?: unknown;
  [other: string]: unknown;
}

/** Builds a ZIP. `files` values: string/bytes contents; `store` uses no compression. Folders are never auto-added. */
export async function buildZip(files: Record<string, string | Uint8Array>, store = false): Promise<Uint8Array> {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(files)) zip.file(name, content, { createFolders: false });
  return zip.generateAsync({ type: 'uint8array', compression: store ? 'STORE' : 'DEFLATE' });
}

export const THUMBNAIL_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="8" height="8"><rect width="8" height="8"/></svg>';

export const INDEX_HTML = '<!doctype html><title>e2e</title><h1>e2e</h1>';

/** A valid scenario archive (thumbnail + asset present), optionally with extra files. */
export async function validArchive(
  id: string,
  version: string,
  extra: Record<string, string | Uint8Array> = {},
  store = false,
): Promise<Uint8Array> {
  const assets = ['resources/assets/index.html', ...Object.keys(extra).filter((name) => name.startsWith('resources/assets/'))];
  return buildZip(
    {
      'scenario.json': JSON.stringify({
        id,
        name: `E2E ${id}`,
        version,
        description: 'failure-path test',
        thumbnails: ['resources/thumbnails/t.svg'],
        assets,
      }),
      'resources/thumbnails/t.svg': THUMBNAIL_SVG,
      'resources/assets/index.html': INDEX_HTML,
      ...extra,
    },
    store,
  );
}

export type DeploymentEntry = components['schemas']['DeploymentRequest'];

export type ResultItem = components['schemas']['DeploymentResultItem'];

/**
 * An active deployment as the typed client gives it: openapi-fetch's response types drop members whose schema type is
 * exactly `null` (here `cause`), though the body has them and the contract check requires them.
 */
export type ListedItem = Omit<components['schemas']['ActiveDeployment'], 'cause'>;

export function entry(device: string, scenario: string, version: string, action: 'DEPLOY' | 'UNDEPLOY' = 'DEPLOY'): DeploymentEntry {
  return { target: { type: 'DEVICE', id: device, subId: null }, what: { type: 'SCENARIO', id: scenario, subId: version }, action };
}

export function keysOf(items: ListedItem[]): string[] {
  return items.map((item) => `${item.target.id}#${item.what.id}#${item.what.subId}`);
}

/**
 * Deployment requests and listings through the typed client on the service `service` returns (the file's), checked
 * against the document; `deploy` also asserts a 200 with one fresh-id item per entry and tracks the SUCCESS items in
 * `activeByCompany`.
 */
export function deploymentHelpers(service: () => LocalService) {
  /** The typed client as the holder of `token`; answers are checked against the document. */
  const as = (token: string) => clientFor(service(), token);

  /** Active deployments this file created, per company: `device#scenario#version`. Kept from every SUCCESS item. */
  const activeByCompany = new Map<string, Set<string>>([
    ['acme', new Set()],
    ['globex', new Set()],
  ]);

  /** Every deployment result id seen, to prove ids are fresh. */
  const seenIds = new Set<string>();

  /** POSTs a deployment request through the typed client: the whole answer. */
  function postDeployments(token: string, company: string, requests: DeploymentEntry[], note?: string) {
    return as(token).main.POST('/companies/{companyId}/resources/deployments', {
      params: { path: { companyId: company } },
      body: { requests, ...(note === undefined ? {} : { note }) },
    });
  }

  /** A company's active deployments (one page) through the typed client: the whole answer. */
  function listDeployments(token: string, company: string, query: { limit?: number; cursor?: string } = {}) {
    return as(token).main.GET('/companies/{companyId}/resources/DEVICE/deployments', { params: { path: { companyId: company }, query } });
  }

  /** A device's active deployments (one page) through the typed client: the whole answer. */
  function listDeviceDeployments(token: string, company: string, deviceId: string, query: { limit?: number; cursor?: string } = {}) {
    return as(token).main.GET('/companies/{companyId}/resources/{deviceId}/deployments', {
      params: { path: { companyId: company, deviceId }, query },
    });
  }

  /** POSTs a deployment request, asserts 200 with one fresh-id item per entry in order, and tracks SUCCESS items. */
  async function deploy(token: string, company: string, requests: DeploymentEntry[], note?: string): Promise<ResultItem[]> {
    const result = await postDeployments(token, company, requests, note);
    expect(result.response.status, JSON.stringify(result.error)).toBe(200);
    expect(result.response.headers.get('content-type') ?? '').toMatch(/^application\/json\b/);
    const items = expectOk(result).items;
    expect(items).toHaveLength(requests.length);
    items.forEach((item, index) => {
      const request = requests[index] as DeploymentEntry;
      expect(item.id).toMatch(ULID);
      expect(seenIds.has(item.id), `id ${item.id} reused`).toBe(false);
      seenIds.add(item.id);
      expect(item.target.id).toBe(request.target.id);
      expect(item.target.type).toBe(request.target.type);
      expect(item.what).toEqual({ type: request.what.type, id: request.what.id, subId: request.what.subId });
      expect(item.action).toBe(request.action);
      if (item.state === 'SUCCESS') {
        expect(item.cause).toBeNull();
        const key = `${item.target.id}#${item.what.id}#${item.what.subId}`;
        const active = activeByCompany.get(company) as Set<string>;
        if (item.action === 'DEPLOY') active.add(key);
        else active.delete(key);
      } else {
        expect(item.cause).toEqual(expect.any(String));
      }
    });
    return items;
  }

  /** Follows `nextCursor` through a company's active deployments with `limit`, returning every page. */
  async function listAllPages(
    token: string,
    company: string,
    limit: number,
  ): Promise<{ items: ListedItem[]; nextCursor: string | null }[]> {
    const pages: { items: ListedItem[]; nextCursor: string | null }[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: ListedItem[]; nextCursor: string | null } = expectOk(
        await listDeployments(token, company, cursor === null ? { limit } : { limit, cursor }),
      );
      expect(page.items.length).toBeLessThanOrEqual(limit);
      pages.push(page);
      cursor = page.nextCursor;
      expect(pages.length, 'pagination does not terminate').toBeLessThan(1_000);
    } while (cursor !== null);
    return pages;
  }

  async function deviceDeployments(token: string, company: string, device: string): Promise<ListedItem[]> {
    const result = expectOk(await listDeviceDeployments(token, company, device, { limit: 1000 }));
    expect(result.nextCursor).toBeNull();
    return result.items;
  }

  async function companyDeployments(token: string, company: string): Promise<ListedItem[]> {
    return (await listAllPages(token, company, 1000)).flatMap((page) => page.items);
  }

  return {
    as,
    activeByCompany,
    postDeployments,
    listDeployments,
    listDeviceDeployments,
    deploy,
    listAllPages,
    deviceDeployments,
    companyDeployments,
  };
}
