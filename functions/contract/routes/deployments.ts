/** Deployment routes of the main address: execute (deploy/undeploy), history, active deployments. */
import { z } from 'zod';
import { MAX_HISTORY_ID_LENGTH, MAX_ULID_TIME, parseInstant } from '../../core/deployment-history.js';
import { DeploymentRequestBodySchema, deploymentRequestTooLarge } from '../../core/deployments.js';
import { boolean, CompanyParams, companyId, ListQuery, pagingParameters, pathId, single, text } from '../parameters.js';
import { defineRoute } from '../route.js';

const deviceId = pathId('deviceId', 'A device of the company.');

/** An ISO-8601 instant with a time zone, not before 1970, as epoch milliseconds. */
function instant(name: string) {
  return single(name)
    .transform((value, context) => {
      const parsed = parseInstant(value);
      if (parsed === undefined || parsed < 0 || parsed > MAX_ULID_TIME) {
        context.addIssue({
          code: 'custom',
          message: `'${name}' must be an ISO-8601 instant with a time zone, e.g. 2025-03-01T12:00:00Z, not before 1970; got '${value}'.`,
        });
        return z.NEVER;
      }
      return parsed;
    })
    .optional();
}

/** The history listing's query: filters by device, scenario, version and time, and paging. */
export const HistoryQuery = z
  .strictObject({
    deviceId: text('deviceId', MAX_HISTORY_ID_LENGTH).optional().meta({ description: 'Only the actions on this device (`target.id`).' }),
    scenarioId: text('scenarioId', MAX_HISTORY_ID_LENGTH).optional().meta({ description: 'Only the actions on this scenario (`what.id`).' }),
    version: text('version', MAX_HISTORY_ID_LENGTH).optional()
      .meta({ description: 'Only the actions on this version of `scenarioId` (`what.subId`); requires `scenarioId`.' }),
    from: instant('from').meta({ description: 'ISO-8601 instant with a time zone, inclusive.', example: '2025-03-01T00:00:00Z' }),
    to: instant('to').meta({ description: 'ISO-8601 instant with a time zone, exclusive; after `from`.', example: '2025-04-01T00:00:00Z' }),
    ...pagingParameters,
  })
  .superRefine((query, context) => {
    if (query.version !== undefined && query.scenarioId === undefined) {
      context.addIssue({ code: 'custom', path: ['version'], message: "'version' filters the versions of one scenario: it needs 'scenarioId'." });
    }
    if (query.from !== undefined && query.to !== undefined && query.from >= query.to) {
      context.addIssue({ code: 'custom', path: ['to'], message: "'to' (exclusive) must be after 'from' (inclusive)." });
    }
  });

/** POST /companies/{companyId}/resources/deployments */
export const deploymentsExecute = defineRoute({
  id: 'DeploymentsExecute',
  api: 'main',
  method: 'POST',
  path: '/companies/{companyId}/resources/deployments',
  scope: 'deployments:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: z.strictObject({
      dryRun: boolean('dryRun').optional().transform((value) => value ?? false)
        .meta({ description: 'true: answer what would result, change nothing.', example: 'true' }),
    }),
    body: {
      kind: 'json', schema: DeploymentRequestBodySchema, tooLarge: deploymentRequestTooLarge,
      invalidDetail: 'The deployment request body is invalid; nothing was changed.',
    },
  },
  // Reads the devices and scenario versions a request names; writes deployment slots and the history of failed entries.
  access: { storage: true, tables: { devices: 'R', scenarios: 'R', deployments: 'RW', idempotency: 'RW' } },
  entry: 'functions/handlers/deployments-execute.ts',
});

/** GET /companies/{companyId}/resources/deployments/history */
export const deploymentsHistory = defineRoute({
  id: 'DeploymentsHistory',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/deployments/history',
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: HistoryQuery },
  // Pages the history: one Query on the deployments table or its gsi1/gsi2 (each index granted by name).
  access: { storage: true, pagesListings: true, tables: { deployments: 'R' } },
  entry: 'functions/handlers/deployments-history.ts',
});

/** GET /companies/{companyId}/resources/DEVICE/deployments */
export const deploymentsListAll = defineRoute({
  id: 'DeploymentsListAll',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/DEVICE/deployments',
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: ListQuery },
  // Pages active deployments.
  access: { storage: true, pagesListings: true, tables: { devices: 'R', deployments: 'R' } },
  entry: 'functions/handlers/deployments-list.ts',
});

/** GET /companies/{companyId}/resources/{deviceId}/deployments */
export const deploymentsListDevice = defineRoute({
  id: 'DeploymentsListDevice',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/{deviceId}/deployments',
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, deviceId }), query: ListQuery },
  // Checks the device exists, pages its active deployments.
  access: { storage: true, pagesListings: true, tables: { devices: 'R', deployments: 'R' } },
  entry: 'functions/handlers/deployments-list.ts',
});
