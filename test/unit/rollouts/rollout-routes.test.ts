import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { openApiDocument } from '../../../functions/contract/openapi.js';
import {
  rolloutCancel,
  rolloutCreate,
  rolloutGet,
  rolloutPause,
  rolloutPreview,
  rolloutResume,
  rolloutsList,
} from '../../../functions/contract/routes/rollouts.js';
import { matchRoute, ROUTES } from '../../../functions/contract/routes.js';
import { Rollout, type RolloutCreateBody, RolloutPage } from '../../../functions/contract/schemas/rollouts.js';
import {
  MAX_ROLLOUT_IDS,
  MAX_ROLLOUT_TARGETS,
  MAX_ROLLOUT_WAVES,
  type RolloutCreateInput,
  type RolloutView,
} from '../../../functions/core/rollouts/model.js';
import { BadRequestError, PayloadTooLargeError } from '../../../functions/core/shared/errors.js';
import { routeInput } from '../../../functions/platform/http.js';
import { bodyOf } from '../../support/route-input.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const valid = {
  action: 'DEPLOY',
  what: { type: 'SCENARIO', id: 'welcome', subId: '1.2.0' },
  targets: { query: 'connection.state=CONNECTED' },
};

/** The violations of a 400 for `body`, or the error thrown when it is not a 400. */
function violations(body: unknown): unknown {
  try {
    bodyOf(rolloutCreate, body);
  } catch (error) {
    // An error without violations had no `errors` member.
    return error instanceof BadRequestError ? (error.violations.length > 0 ? error.violations : undefined) : error;
  }
  return 'accepted';
}

/** The paths of the violations of `body`. */
function paths(body: unknown): string[] {
  return (violations(body) as { path: string }[]).map((violation) => violation.path);
}

describe('RolloutCreateBody', () => {
  it('gives the create input: a query or ids, the optional members only when given', () => {
    expect(bodyOf(rolloutCreate, valid)).toEqual(valid);
    const full = {
      action: 'UNDEPLOY',
      what: { type: 'SCENARIO', id: 'welcome', subId: '1.2.0' },
      targets: { ids: ['kiosk-2', 'kiosk-1'] },
      waves: [1, MAX_ROLLOUT_TARGETS],
      failureThreshold: 0,
      waveTimeoutSeconds: 60,
      note: 'n'.repeat(2_000),
    };
    expect(bodyOf(rolloutCreate, full)).toEqual(full);
    expect(bodyOf(rolloutCreate, { ...valid, targets: { query: '' }, failureThreshold: 1, waveTimeoutSeconds: 604_800 })).toMatchObject({
      targets: { query: '' },
    });
    expectTypeOf<z.output<typeof RolloutCreateBody>>().toExtend<RolloutCreateInput>();
  });

  it('needs exactly one of targets.query and targets.ids', () => {
    expect(paths({ ...valid, targets: {} })).toEqual(['/targets']);
    expect(paths({ ...valid, targets: { query: '', ids: ['kiosk-1'] } })).toEqual(['/targets']);
    expect(paths({ ...valid, targets: { query: 'health.mode=SERVER', other: 1 } })).toEqual(['/targets/other']);
  });

  it('checks the query as the search checks its own, each violation under /targets/query/<parameter>, with the other members', () => {
    expect(
      violations({ ...valid, targets: { query: 'connection.state=ONLINE&page=2&type=SCENARIO&health.mode=SERVER' }, waves: [0] }),
    ).toEqual([
      { path: '/targets/query/connection.state', message: expect.stringContaining("'ONLINE' is not a value of 'connection.state'") },
      { path: '/targets/query/page', message: expect.any(String) },
      { path: '/targets/query/type', message: expect.any(String) },
      { path: '/waves/0', message: expect.any(String) },
    ]);
    expect(paths({ ...valid, targets: { query: `location.name=${'x'.repeat(2_000)}` } })).toEqual(['/targets/query']);
  });

  it('refuses ids that are not device ids, repeated, or none', () => {
    expect(paths({ ...valid, targets: { ids: ['kiosk-1', 'bad id', 'kiosk-1', 'kiosk-1'] } })).toEqual([
      '/targets/ids/1',
      '/targets/ids/2',
      '/targets/ids/3',
    ]);
    expect(violations({ ...valid, targets: { ids: ['kiosk-1', 'kiosk-2', 'kiosk-1'] } })).toEqual([
      { path: '/targets/ids/2', message: "'kiosk-1' is listed twice (also at /targets/ids/0)." },
    ]);
    expect(paths({ ...valid, targets: { ids: [] } })).toEqual(['/targets/ids']);
  });

  it(`answers 413 for more than ${MAX_ROLLOUT_IDS} ids, before validating them`, () => {
    const ids = Array.from({ length: MAX_ROLLOUT_IDS + 1 }, (_, n) => `kiosk-${n}`);
    const error = violations({ ...valid, targets: { ids } });
    expect(error).toBeInstanceOf(PayloadTooLargeError);
    expect((error as Error).message).toMatch(
      /^targets\.ids lists 10,001 device ids; at most 10,000 are accepted\. Select the devices with targets\.query/,
    );
    expect(bodyOf(rolloutCreate, { ...valid, targets: { ids: ids.slice(1) } })).toMatchObject({ targets: { ids: ids.slice(1) } });
  });

  it('bounds waves, failureThreshold, waveTimeoutSeconds, note and what', () => {
    for (const [member, value] of [
      ['waves', []],
      ['waves', Array.from({ length: MAX_ROLLOUT_WAVES + 1 }, () => 1)],
      ['waves', [1.5]],
      ['waves', [MAX_ROLLOUT_TARGETS + 1]],
      ['failureThreshold', -0.01],
      ['failureThreshold', 1.01],
      ['waveTimeoutSeconds', 59],
      ['waveTimeoutSeconds', 604_801],
      ['waveTimeoutSeconds', 60.5],
      ['note', 'n'.repeat(2_001)],
      ['what', { type: 'ARCHIVE', id: 'welcome', subId: '1.2.0' }],
      ['what', { type: 'SCENARIO', id: '', subId: '1.2.0' }],
      ['what', { type: 'SCENARIO', id: 'welcome', subId: 'v'.repeat(257) }],
      ['action', 'REDEPLOY'],
      ['colour', 'red'],
    ] as const) {
      const found = paths({ ...valid, [member]: value });
      expect(found.length, `${member} ${JSON.stringify(value).slice(0, 40)}`).toBeGreaterThan(0);
      expect(
        found.every((path) => path.startsWith(`/${member}`)),
        `${member} ${found.join(', ')}`,
      ).toBe(true);
    }
    expect(bodyOf(rolloutCreate, { ...valid, waves: Array.from({ length: MAX_ROLLOUT_WAVES }, () => 1) })).toMatchObject({
      waves: expect.any(Array),
    });
  });
});

describe('RolloutCreateBody of a COMMAND rollout', () => {
  const command = { action: 'COMMAND', command: { command: 'reboot' }, targets: { ids: ['kiosk-1'] } };

  it('gives the create input with the command, its arguments and expiry only when given', () => {
    expect(bodyOf(rolloutCreate, command)).toEqual(command);
    const full = { ...command, command: { command: 'print-test-page', arguments: { copies: 2 }, expiresInSeconds: 600 }, waves: [1] };
    expect(bodyOf(rolloutCreate, full)).toEqual(full);
  });

  it('takes `command` instead of `what`, and no action other than DEPLOY, UNDEPLOY and COMMAND', () => {
    expect(paths({ ...command, what: valid.what })).toEqual(['/what']);
    expect(paths({ action: 'COMMAND', targets: command.targets })).toEqual(['/command']);
    expect(paths({ ...valid, command: command.command })).toEqual(['/command']);
    expect(paths({ ...command, action: 'RUN' })).toEqual(['/action']);
  });

  it('bounds the command name, its arguments and its expiry', () => {
    for (const value of [
      { command: '' },
      { command: 'x'.repeat(257) },
      { command: 'line\nbreak' },
      { command: 'reboot', expiresInSeconds: 9 },
      { command: 'reboot', expiresInSeconds: 604_801 },
      { command: 'reboot', arguments: { blob: 'x'.repeat(8_192) } },
      { command: 'reboot', colour: 'red' },
    ]) {
      const found = paths({ ...command, command: value });
      expect(found.length, JSON.stringify(value).slice(0, 60)).toBeGreaterThan(0);
      expect(
        found.every((path) => path.startsWith('/command')),
        found.join(', '),
      ).toBe(true);
    }
  });
});

describe('Rollout', () => {
  const view: RolloutView = {
    id: '01JD2X3Y4Z5A6B7C8D9E0F1G2H',
    state: 'RUNNING',
    action: 'DEPLOY',
    what: { type: 'SCENARIO', id: 'welcome', subId: '1.2.0' },
    targets: 110,
    waves: [
      {
        size: 10,
        state: 'COMPLETED',
        counts: { SUCCESS: 9, ALREADY_DEPLOYED: 1, INSTALLED: 9 },
        startedAt: '2025-03-01T12:00:00.000Z',
        completedAt: '2025-03-01T12:04:10.000Z',
      },
      { size: 100, state: 'RUNNING', counts: {}, startedAt: '2025-03-01T12:04:10.000Z' },
    ],
    failureThreshold: 0.1,
    waveTimeoutSeconds: 3600,
    note: null,
    createdBy: 'operator',
    created: '2025-03-01T12:00:00.000Z',
    updated: '2025-03-01T12:04:10.000Z',
    continuous: false,
    events: [
      { at: '2025-03-01T12:00:00.000Z', type: 'CREATED', by: 'operator' },
      { at: '2025-03-01T12:00:00.000Z', type: 'WAVE_STARTED', wave: 1 },
      { at: '2025-03-01T12:04:10.000Z', type: 'WAVE_COMPLETED', wave: 1, counts: { SUCCESS: 9, ALREADY_DEPLOYED: 1, INSTALLED: 9 } },
      { at: '2025-03-01T12:04:10.000Z', type: 'WAVE_STARTED', wave: 2 },
    ],
    eventsDropped: 0,
  };

  it('is the core RolloutView, and describes every view the use cases answer', () => {
    expectTypeOf<z.output<typeof Rollout>>().toEqualTypeOf<RolloutView>();
    expect(Rollout.parse(view)).toEqual(view);
    expect(Rollout.parse({ ...view, state: 'PAUSED', pausedReason: 'Paused by operator.' })).toMatchObject({
      pausedReason: 'Paused by operator.',
    });
    expect(RolloutPage.parse({ items: [view], nextCursor: null })).toEqual({ items: [view], nextCursor: null });
    expect(Rollout.safeParse({ ...view, state: 'DONE' }).success).toBe(false);
    expect(Rollout.safeParse({ ...view, extra: 1 }).success).toBe(false);
    expect(Rollout.parse({ ...view, continuous: true, joined: 3 })).toMatchObject({ continuous: true, joined: 3 });
    expect(Rollout.safeParse({ ...view, continuous: true, joined: -1 }).success).toBe(false);
    expect(Rollout.safeParse({ ...view, events: [{ at: '2025-03-01T12:00:00.000Z', type: 'WAVE_STARTED', wave: 0 }] }).success).toBe(false);
    expect(Rollout.safeParse({ ...view, events: [{ at: '2025-03-01T12:00:00.000Z', type: 'REWOUND' }] }).success).toBe(false);
  });
});

describe('rollout routes', () => {
  it('are found at their paths; /rollouts/deployments stays the deployments of a device `rollouts`', () => {
    const match = (method: string, path: string) => {
      const found = matchRoute(ROUTES, 'main', method, path);
      return found !== undefined && 'route' in found ? { id: found.route.id, parameters: found.pathParameters } : found;
    };
    const id = '01JD2X3Y4Z5A6B7C8D9E0F1G2H';
    expect(match('POST', '/companies/acme/resources/rollouts')).toEqual({ id: 'RolloutCreate', parameters: { companyId: 'acme' } });
    expect(match('GET', '/companies/acme/resources/rollouts')).toEqual({ id: 'RolloutsList', parameters: { companyId: 'acme' } });
    expect(match('GET', `/companies/acme/resources/rollouts/${id}`)).toEqual({
      id: 'RolloutGet',
      parameters: { companyId: 'acme', rolloutId: id },
    });
    for (const [verb, routeId] of [
      ['pause', 'RolloutPause'],
      ['resume', 'RolloutResume'],
      ['cancel', 'RolloutCancel'],
    ]) {
      expect(match('POST', `/companies/acme/resources/rollouts/${id}/${verb}`)).toEqual({
        id: routeId,
        parameters: { companyId: 'acme', rolloutId: id },
      });
    }
    expect(match('GET', '/companies/acme/resources/rollouts/deployments')).toMatchObject({
      id: 'DeploymentsListDevice',
      parameters: { deviceId: 'rollouts' },
    });
    expect(match('DELETE', `/companies/acme/resources/rollouts/${id}`)).toEqual({ methodNotAllowed: true, allowedMethods: ['GET'] });
  });

  it('validate the rollout id as other path ids, and refuse a query string', () => {
    const input = (parameters: Record<string, string>, query = '') =>
      routeInput(rolloutPause, { pathParameters: parameters, rawQueryString: query, headers: {} } as never);
    expect(input({ companyId: 'acme', rolloutId: 'anything' }).params).toEqual({ companyId: 'acme', rolloutId: 'anything' });
    expect(() => input({ companyId: 'acme', rolloutId: 'x'.repeat(257) })).toThrow(BadRequestError);
    expect(() => input({ companyId: 'acme', rolloutId: 'x' }, 'force=true')).toThrow(BadRequestError);
    expect(
      routeInput(rolloutsList, { pathParameters: { companyId: 'acme' }, rawQueryString: 'limit=5', headers: {} } as never).query,
    ).toEqual({
      limit: 5,
    });
  });

  it('declare the scope, access and handler of each operation', () => {
    const routes = [rolloutCreate, rolloutsList, rolloutGet, rolloutPause, rolloutResume, rolloutCancel, rolloutPreview];
    expect(routes.map((route) => [route.id, route.scope, route.entry])).toEqual([
      ['RolloutCreate', 'deployments:write', 'functions/handlers/rollout-create.ts'],
      ['RolloutsList', 'deployments:read', 'functions/handlers/rollouts-list.ts'],
      ['RolloutGet', 'deployments:read', 'functions/handlers/rollout-get.ts'],
      ['RolloutPause', 'deployments:write', 'functions/handlers/rollout-pause.ts'],
      ['RolloutResume', 'deployments:write', 'functions/handlers/rollout-resume.ts'],
      ['RolloutCancel', 'deployments:write', 'functions/handlers/rollout-cancel.ts'],
      ['RolloutPreview', 'deployments:write', 'functions/handlers/rollout-preview.ts'],
    ]);
    expect(routes.map((route) => route.access)).toEqual([
      { storage: true, tables: { rollouts: 'RW', scenarios: 'R' }, rolloutQueue: true, search: 'search' },
      { storage: true, pagesListings: true, tables: { rollouts: 'R' } },
      { storage: true, tables: { rollouts: 'R' } },
      { storage: true, tables: { rollouts: 'RW' } },
      { storage: true, tables: { rollouts: 'RW' }, rolloutQueue: true },
      // A COMMAND rollout's cancel sends the work that cancels its QUEUED commands.
      { storage: true, tables: { rollouts: 'RW' }, rolloutQueue: true },
      // The preview writes nothing: it reads the scenario version and the targets' health.
      { storage: true, tables: { scenarios: 'R', devices: 'R' }, search: 'search' },
    ]);
    for (const route of routes) expect(ROUTES, route.id).toContain(route);
  });
});

describe('the OpenAPI document of the rollout routes', () => {
  const document = openApiDocument() as Json;
  const operation = (path: string, method: string): Json => document.paths[path][method];
  const base = '/companies/{companyId}/resources/rollouts';
  const deref = (value: Json): Json => {
    const pointer = value.$ref as string | undefined;
    return pointer === undefined
      ? value
      : (pointer
          .slice(2)
          .split('/')
          .reduce((node: Json, key) => node[key], document) as Json);
  };

  it('has the six operations with every status', () => {
    const expected: [string, string, string, string[]][] = [
      [base, 'post', 'RolloutCreate', ['202', '400', '401', '403', '413', '415', '422', '431', '500', '503']],
      [base, 'get', 'RolloutsList', ['200', '400', '401', '403', '431', '500', '503']],
      [`${base}/{rolloutId}`, 'get', 'RolloutGet', ['200', '400', '401', '403', '404', '431', '500', '503']],
      [`${base}/{rolloutId}/pause`, 'post', 'RolloutPause', ['200', '400', '401', '403', '404', '409', '431', '500', '503']],
      [`${base}/{rolloutId}/resume`, 'post', 'RolloutResume', ['200', '400', '401', '403', '404', '409', '431', '500', '503']],
      [`${base}/{rolloutId}/cancel`, 'post', 'RolloutCancel', ['200', '400', '401', '403', '404', '409', '431', '500', '503']],
    ];
    for (const [path, method, id, statuses] of expected) {
      const op = operation(path, method);
      expect(op.operationId).toBe(id);
      expect(op.tags).toEqual(['Rollouts']);
      expect(Object.keys(op.responses).sort(), id).toEqual(statuses);
    }
    expect((document.tags as Json[]).map((tag) => tag.name)).toContain('Rollouts');
  });

  it('answers the rollout with a required Location on create, and the rollout or a page elsewhere', () => {
    const created = operation(base, 'post').responses['202'];
    expect(created.headers.Location).toMatchObject({ required: true, schema: { type: 'string', format: 'uri-reference' } });
    expect(created.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Rollout' });
    expect(operation(base, 'get').responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/RolloutPage',
    });
    for (const verb of ['pause', 'resume', 'cancel']) {
      expect(operation(`${base}/{rolloutId}/${verb}`, 'post').responses['200'].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/Rollout',
      });
    }
    expect(operation(base, 'post').requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/RolloutCreateBody',
    });
    expect(document.components.schemas.RolloutCreateBody.oneOf).toEqual([
      { $ref: '#/components/schemas/DeploymentRolloutCreateBody' },
      { $ref: '#/components/schemas/CommandRolloutCreateBody' },
    ]);
    const command = document.components.schemas.CommandRolloutCreateBody;
    expect(command.required).toEqual(expect.arrayContaining(['action', 'command', 'targets']));
    expect(command.properties.what).toBeUndefined();
    const targets = deref(document.components.schemas.DeploymentRolloutCreateBody.properties.targets);
    expect(targets).toMatchObject({ minProperties: 1, maxProperties: 1, additionalProperties: false });
    expect(targets.properties.ids).toMatchObject({ minItems: 1, maxItems: MAX_ROLLOUT_IDS });
    expect(targets.properties.query).toMatchObject({ maxLength: 2_000 });
    const rollout = document.components.schemas.Rollout;
    expect(rollout.required).toEqual(
      expect.arrayContaining([
        'id',
        'state',
        'action',
        'targets',
        'waves',
        'failureThreshold',
        'waveTimeoutSeconds',
        'note',
        'created',
        'updated',
        'createdBy',
      ]),
    );
    expect(rollout.required).not.toContain('pausedReason');
    // `what` for DEPLOY and UNDEPLOY, `command` for COMMAND: neither is always there.
    expect(rollout.required).not.toContain('what');
    expect(rollout.required).not.toContain('command');
  });
});
