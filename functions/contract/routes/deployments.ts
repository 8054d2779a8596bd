/** Deployment routes of the main address: execute (deploy/undeploy), history, active deployments. */
import * as z from 'zod';
import { deploymentRequestTooLarge, MAX_DEPLOYMENT_ENTRIES } from '../../core/deployments/deployments.js';
import { MAX_HISTORY_ID_LENGTH, MAX_ULID_TIME, parseInstant } from '../../core/deployments/history.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { boolean, CompanyParams, companyId, ListQuery, pagingParameters, pathId, single, text } from '../parameters.js';
import { IDEMPOTENCY_KEY_RETENTION_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from '../protocol.js';
import { defineRoute } from '../route.js';
import { ActiveDeploymentPage, DeploymentHistoryPage, DeploymentRequestBody, DeploymentResultList } from '../schemas/deployments.js';
import { ConflictProblem, PayloadTooLargeProblem, UnprocessableRequestProblem } from '../schemas/problems.js';
import { AUTHENTICATED_PROBLEMS, HEADERS, PROBLEM_RESPONSES, problem, serviceUnavailable } from '../schemas/responses.js';

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
    scenarioId: text('scenarioId', MAX_HISTORY_ID_LENGTH)
      .optional()
      .meta({ description: 'Only the actions on this scenario (`what.id`).' }),
    version: text('version', MAX_HISTORY_ID_LENGTH)
      .optional()
      .meta({ description: 'Only the actions on this version of `scenarioId` (`what.subId`); requires `scenarioId`.' }),
    from: instant('from').meta({ description: 'ISO-8601 instant with a time zone, inclusive.', example: '2025-03-01T00:00:00Z' }),
    to: instant('to').meta({ description: 'ISO-8601 instant with a time zone, exclusive; after `from`.', example: '2025-04-01T00:00:00Z' }),
    ...pagingParameters,
  })
  .superRefine(
    (query, context) => {
      if (query.version !== undefined && query.scenarioId === undefined) {
        context.addIssue({
          code: 'custom',
          path: ['version'],
          message: "'version' filters the versions of one scenario: it needs 'scenarioId'.",
        });
      }
      if (typeof query.from === 'number' && typeof query.to === 'number' && query.from >= query.to) {
        context.addIssue({ code: 'custom', path: ['to'], message: "'to' (exclusive) must be after 'from' (inclusive)." });
      }
    },
    { when: () => true },
  );

/** POST /companies/{companyId}/resources/deployments */
export const deploymentsExecute = defineRoute({
  id: 'DeploymentsExecute',
  api: 'main',
  method: 'POST',
  path: '/companies/{companyId}/resources/deployments',
  summary: 'Deploy or undeploy scenario versions on devices',
  description: `Carries out each request entry (at most ${withThousandsSeparators(MAX_DEPLOYMENT_ENTRIES)}) and reports one result item per entry, in request order; per-item failures are reported with state FAILURE and a cause, and the status stays 200. Entries with the same (device, scenario, version) run one after another, in order. A structurally invalid body gives 400 and more than ${withThousandsSeparators(MAX_DEPLOYMENT_ENTRIES)} entries 413; both change nothing. \`dryRun=true\` answers what would happen without writing anything. Each SUCCESS emits a \`DeploymentChanged\` event (EventBridge in AWS; the local bus appends to \`.data/events/events.jsonl\`). With an \`Idempotency-Key\` header (1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} characters; empty or longer gives 400 before anything runs), a retry returns the first response (marked \`Idempotent-Replayed: true\`) without executing again, whatever its size; keys are scoped per company and kept ${IDEMPOTENCY_KEY_RETENTION_SECONDS / 3600} h. Should storing the response fail, the response is still returned and a retry with the key executes again, which is safe: each entry is a conditional write. Needs \`deployments:write\` on the company.`,
  tags: ['Deployments'],
  scope: 'deployments:write',
  companyParameter: 'companyId',
  request: {
    params: CompanyParams,
    query: z.strictObject({
      dryRun: boolean('dryRun')
        .optional()
        .transform((value) => value ?? false)
        .meta({ description: 'true: answer what would result, change nothing.', default: false, example: true }),
    }),
    body: {
      kind: 'json',
      schema: DeploymentRequestBody,
      tooLarge: deploymentRequestTooLarge,
      invalidDetail: 'The deployment request body is invalid; nothing was changed.',
    },
  },
  // Reads the devices and scenario versions a request names; writes deployment slots and the history of failed entries.
  access: { storage: true, tables: { devices: 'R', scenarios: 'R', deployments: 'RW', idempotency: 'RW' } },
  entry: 'functions/handlers/deployments-execute.ts',
  responses: {
    415: PROBLEM_RESPONSES.UnsupportedMediaType,
    200: {
      description: 'One result item per request entry.',
      schema: DeploymentResultList,
      headers: { 'Idempotent-Replayed': HEADERS['Idempotent-Replayed'] },
    },
    ...AUTHENTICATED_PROBLEMS,
    400: problem(
      'BadRequest',
      `Bad Request: a body that is not valid, a \`dryRun\` other than true or false, or an \`Idempotency-Key\` that is empty or longer than ${MAX_IDEMPOTENCY_KEY_LENGTH} characters (\`errors[].path\` \`Idempotency-Key\`). Nothing was changed.`,
    ),
    409: {
      description: 'Conflict: a request with this Idempotency-Key is still being processed; retry shortly to get its response.',
      schema: ConflictProblem,
    },
    413: {
      description: `Content Too Large: more than ${withThousandsSeparators(MAX_DEPLOYMENT_ENTRIES)} entries, or a body above the address's limit; split the request. Nothing was changed.`,
      schema: PayloadTooLargeProblem,
    },
    422: {
      description: 'Unprocessable: the Idempotency-Key was already used with a different body or query.',
      schema: UnprocessableRequestProblem,
    },
    503: serviceUnavailable(
      'A backend is unavailable, e.g. the Idempotency-Key store before the request ran (nothing was changed). Retry after `Retry-After` seconds, with the same key.',
    ),
  },
});

/** GET /companies/{companyId}/resources/deployments/history */
export const deploymentsHistory = defineRoute({
  id: 'DeploymentsHistory',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/deployments/history',
  summary: 'List the deployment history',
  description:
    "Every DEPLOY and UNDEPLOY attempted in the company, successful or not, newest first, with who made it, when, the request's note, the outcome and the cause (entries of `kind` ACTION), and every status a device reported on one of its deployments (`kind` DEVICE_STATUS, `by` the device's client id). Filters combine (AND); `version` needs `scenarioId`; `from` is inclusive and `to` exclusive. Unknown, repeated or malformed parameters, `version` without `scenarioId`, `from` not before `to` and a cursor issued for another listing give 400 naming each parameter. Needs `deployments:read` on the company.",
  tags: ['Deployments'],
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: HistoryQuery },
  // Pages the history: one Query on the deployments table or its gsi1/gsi2 (each index granted by name).
  access: { storage: true, pagesListings: true, tables: { deployments: 'R' } },
  entry: 'functions/handlers/deployments-history.ts',
  responses: {
    200: { description: 'A page of history entries, newest first.', schema: DeploymentHistoryPage },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** GET /companies/{companyId}/resources/DEVICE/deployments */
export const deploymentsListAll = defineRoute({
  id: 'DeploymentsListAll',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/DEVICE/deployments',
  summary: 'List active deployments of every device of the company',
  description:
    'Only successful deployments that are still active, ordered by (device, scenario, version). Needs `deployments:read` on the company.',
  tags: ['Deployments'],
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: CompanyParams, query: ListQuery },
  // Pages active deployments.
  access: { storage: true, pagesListings: true, tables: { devices: 'R', deployments: 'R' } },
  entry: 'functions/handlers/deployments-list.ts',
  responses: {
    200: { description: 'A page of active deployments.', schema: ActiveDeploymentPage },
    ...AUTHENTICATED_PROBLEMS,
  },
});

/** GET /companies/{companyId}/resources/{deviceId}/deployments */
export const deploymentsListDevice = defineRoute({
  id: 'DeploymentsListDevice',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/{deviceId}/deployments',
  summary: 'List active deployments of one device',
  description:
    'Only successful deployments that are still active, ordered by (scenario, version). Needs `deployments:read` on the company.',
  tags: ['Deployments'],
  scope: 'deployments:read',
  companyParameter: 'companyId',
  request: { params: z.object({ companyId, deviceId }), query: ListQuery },
  // Checks the device exists, pages its active deployments.
  access: { storage: true, pagesListings: true, tables: { devices: 'R', deployments: 'R' } },
  entry: 'functions/handlers/deployments-list.ts',
  responses: {
    200: { description: 'A page of active deployments.', schema: ActiveDeploymentPage },
    ...AUTHENTICATED_PROBLEMS,
    404: problem('NotFound', 'The device does not exist in the company.'),
  },
});
