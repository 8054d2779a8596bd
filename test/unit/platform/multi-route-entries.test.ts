/**
 * Every function that serves several routes dispatches through routeDispatcher, over exactly the routes it serves:
 * read from the route definitions (locally every route's `entry`; on AWS the entry `onAws` names for an `auth`
 * route), so that a route added to an entry without its handler fails here, not as a 500 in production.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDefinition } from '../../../functions/contract/route.js';
import { AWS_ROUTES, ROUTES } from '../../../functions/contract/routes.js';
import type { RouteDispatcher } from '../../../functions/platform/router.js';

/** The entry that serves `route` on AWS, or undefined when no function does (Cognito's key set). */
function awsEntryOf(route: RouteDefinition): string | undefined {
  if (route.onAws === undefined || route.onAws.kind === 'entry') return route.entry;
  return route.onAws.kind === 'function' ? route.onAws.entry : undefined;
}

/** Each entry module → the ids of the routes it serves, locally or on AWS. */
function routesByEntry(): Map<string, Set<string>> {
  const served = new Map<string, Set<string>>();
  const add = (entry: string | undefined, route: RouteDefinition) => {
    if (entry !== undefined) served.set(entry, (served.get(entry) ?? new Set()).add(route.id));
  };
  for (const route of ROUTES) add(route.entry, route);
  for (const route of AWS_ROUTES) add(awsEntryOf(route), route);
  return served;
}

const MULTI_ROUTE_ENTRIES = [...routesByEntry()].filter(([, ids]) => ids.size > 1);

let authDirectory: string | undefined;

beforeAll(async () => {
  // What the entries read when they load (the cursor key at cold start); nothing is called.
  authDirectory = await mkdtemp(join(tmpdir(), 'dss-router-'));
  Object.assign(process.env, {
    POWERTOOLS_LOG_LEVEL: 'SILENT',
    COMPANIES_TABLE: 'companies',
    DEVICES_TABLE: 'devices',
    SCENARIOS_TABLE: 'scenarios',
    DEPLOYMENTS_TABLE: 'deployments',
    PRESENCE_TABLE: 'presence',
    ROLLOUTS_TABLE: 'rollouts',
    COMMANDS_TABLE: 'commands',
    WEBHOOKS_TABLE: 'webhooks',
    ALERTS_TABLE: 'alerts',
    API_CLIENTS_TABLE: 'api-clients',
    AUDIT_TABLE: 'audit',
    ARCHIVE_BUCKET: 'archives',
    CURSOR_SIGNING_KEY: 'ab'.repeat(32),
    AWS_REGION: 'us-east-1',
    LOCAL_AUTH_DIR: authDirectory,
  });
});

afterAll(async () => {
  if (authDirectory !== undefined) await rm(authDirectory, { recursive: true, force: true });
});

describe('functions serving several routes', () => {
  it('are the admin users, admin companies, admin API clients, active deployments, alert rules, alerts, device commands, token, authorization server metadata, device issuer and webhooks functions', () => {
    expect(MULTI_ROUTE_ENTRIES.map(([entry]) => entry).sort()).toEqual([
      'functions/handlers/admin-api-clients.ts',
      'functions/handlers/admin-companies.ts',
      'functions/handlers/admin-users.ts',
      'functions/handlers/alert-rules.ts',
      'functions/handlers/alerts.ts',
      'functions/handlers/auth-cognito-token.ts',
      'functions/handlers/auth-discovery.ts',
      'functions/handlers/auth-token.ts',
      'functions/handlers/deployments-list.ts',
      'functions/handlers/device-commands.ts',
      'functions/handlers/device-issuer.ts',
      'functions/handlers/webhooks.ts',
    ]);
  });

  it.each(MULTI_ROUTE_ENTRIES)('%s dispatches with routeDispatcher over exactly the routes whose entry it is', async (entry, ids) => {
    const module = (await import(`../../../${entry}`)) as { handler: Partial<RouteDispatcher> };
    expect(module.handler.routes, `${entry} is not built with routeDispatcher`).toBeDefined();
    expect(module.handler.routes?.map((route) => route.id).sort()).toEqual([...ids].sort());
  });
});
