/**
 * How client/limits.ts is made from the constants the service enforces (`npm run generate`; a test checks the
 * committed file). The clients import that plain module, not functions/: the console's bundle takes nothing from the
 * service's sources, and a limit changed in the service reaches both clients at the next generate.
 */
import { MAX_DIRECT_UPLOAD_BYTES } from '../functions/contract/archives.js';
import { IDEMPOTENCY_KEY_RETENTION_SECONDS, MAX_IDEMPOTENCY_KEY_LENGTH } from '../functions/contract/protocol.js';
import { ACCESS_TOKEN_LIFETIME_SECONDS } from '../functions/core/access/user-tokens.js';
import {
  MAX_ALERT_MINUTES,
  MAX_ALERT_RULE_NAME_LENGTH,
  MAX_ALERT_RULES_PER_COMPANY,
  MIN_ALERT_MINUTES,
} from '../functions/core/alerts/model.js';
import { MAX_API_CLIENT_NAME_LENGTH, MAX_API_CLIENTS_PER_COMPANY, MAX_PREVIOUS_SECRET_SECONDS } from '../functions/core/clients/model.js';
import {
  DEFAULT_COMMAND_EXPIRY_SECONDS,
  MAX_COMMAND_EXPIRY_SECONDS,
  MAX_COMMAND_JSON_BYTES,
  MAX_COMMAND_NOTE_LENGTH,
  MIN_COMMAND_EXPIRY_SECONDS,
} from '../functions/core/commands/model.js';
import { MAX_COMPANY_NAME_LENGTH, NEW_COMPANY_ID_PATTERN } from '../functions/core/companies/admin.js';
import { DeploymentRequestBodySchema, MAX_DEPLOYMENT_ENTRIES } from '../functions/core/deployments/deployments.js';
import { MAX_HISTORY_ID_LENGTH } from '../functions/core/deployments/history.js';
import { MAX_ROLLOUT_IDS, MAX_ROLLOUT_WAVES } from '../functions/core/rollouts/model.js';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_RESULT_WINDOW } from '../functions/core/search/query.js';
import { IDENTIFIER_PATTERN } from '../functions/core/shared/identifiers.js';
import { MAX_LIST_LIMIT } from '../functions/core/shared/paging.js';
import { MAX_EMAIL_LENGTH, USERNAME_PATTERN } from '../functions/core/users/admin.js';
import { MAX_WEBHOOK_DESCRIPTION_LENGTH, MAX_WEBHOOK_URL_LENGTH, MAX_WEBHOOKS_PER_COMPANY } from '../functions/core/webhooks/model.js';

/** One constant of client/limits.ts: its name, its value and its docstring (one line). */
interface Limit {
  name: string;
  value: number | string | RegExp;
  doc: string;
}

const requestShape = DeploymentRequestBodySchema.shape;

/** Every limit a client needs, in the order written. */
const LIMITS: readonly Limit[] = [
  { name: 'SEARCH_DEFAULT_PAGE_SIZE', value: DEFAULT_PAGE_SIZE, doc: '`pageSize` of GET /resources/search when none is given.' },
  { name: 'SEARCH_MAX_PAGE_SIZE', value: MAX_PAGE_SIZE, doc: 'Largest `pageSize` of GET /resources/search.' },
  {
    name: 'SEARCH_RESULT_WINDOW',
    value: MAX_RESULT_WINDOW,
    doc: 'Deepest result the search pages to: `page × pageSize` may not exceed it (a larger one is a 400).',
  },
  { name: 'MAX_LIST_LIMIT', value: MAX_LIST_LIMIT, doc: 'Largest `limit` of a listing page (deployments, history, scenarios, …).' },
  { name: 'MAX_IDEMPOTENCY_KEY_LENGTH', value: MAX_IDEMPOTENCY_KEY_LENGTH, doc: 'Longest `Idempotency-Key` header, characters.' },
  {
    name: 'IDEMPOTENCY_KEY_RETENTION_SECONDS',
    value: IDEMPOTENCY_KEY_RETENTION_SECONDS,
    doc: "How long the service keeps an `Idempotency-Key`'s answer, seconds: a key sent later executes anew.",
  },
  { name: 'MAX_DEPLOYMENT_ENTRIES', value: MAX_DEPLOYMENT_ENTRIES, doc: 'Most entries one deployment request may carry (more is a 413).' },
  {
    name: 'MAX_DEPLOYMENT_NOTE_LENGTH',
    value: requestShape.note.unwrap().maxLength ?? Number.NaN,
    doc: 'Longest `note` of a deployment request, characters.',
  },
  {
    name: 'MAX_DEPLOYMENT_TARGET_ID_LENGTH',
    value: requestShape.requests.element.shape.target.shape.id.maxLength ?? Number.NaN,
    doc: "Longest `target.id` of a deployment request's entry, characters (a longer one makes the whole request a 400).",
  },
  {
    name: 'MAX_HISTORY_ID_LENGTH',
    value: MAX_HISTORY_ID_LENGTH,
    doc: 'Longest `deviceId`, `scenarioId` or `version` filter of the history.',
  },
  { name: 'MAX_ROLLOUT_WAVES', value: MAX_ROLLOUT_WAVES, doc: "Most wave sizes a rollout's `waves` may list." },
  { name: 'MAX_ROLLOUT_IDS', value: MAX_ROLLOUT_IDS, doc: "Most device ids a rollout's `targets.ids` may hold (more is a 413)." },
  {
    name: 'MAX_COMMAND_JSON_BYTES',
    value: MAX_COMMAND_JSON_BYTES,
    doc: "Most bytes of a command's `arguments` (and of a result's `output`), serialized without white space.",
  },
  { name: 'MAX_COMMAND_NOTE_LENGTH', value: MAX_COMMAND_NOTE_LENGTH, doc: 'Longest `note` of a command, characters.' },
  { name: 'MIN_COMMAND_EXPIRY_SECONDS', value: MIN_COMMAND_EXPIRY_SECONDS, doc: 'Shortest `expiresInSeconds` of a command.' },
  { name: 'MAX_COMMAND_EXPIRY_SECONDS', value: MAX_COMMAND_EXPIRY_SECONDS, doc: 'Longest `expiresInSeconds` of a command (7 days).' },
  {
    name: 'DEFAULT_COMMAND_EXPIRY_SECONDS',
    value: DEFAULT_COMMAND_EXPIRY_SECONDS,
    doc: "A command's `expiresInSeconds` when none is given.",
  },
  { name: 'MAX_ALERT_RULE_NAME_LENGTH', value: MAX_ALERT_RULE_NAME_LENGTH, doc: 'Longest `name` of an alert rule, characters.' },
  { name: 'MIN_ALERT_MINUTES', value: MIN_ALERT_MINUTES, doc: "Shortest `minutes` of an alert rule's condition." },
  { name: 'MAX_ALERT_MINUTES', value: MAX_ALERT_MINUTES, doc: "Longest `minutes` of an alert rule's condition (7 days)." },
  { name: 'MAX_ALERT_RULES_PER_COMPANY', value: MAX_ALERT_RULES_PER_COMPANY, doc: 'Most alert rules a company may have.' },
  { name: 'MAX_WEBHOOKS_PER_COMPANY', value: MAX_WEBHOOKS_PER_COMPANY, doc: 'Most webhooks a company may have (one more is a 409).' },
  { name: 'MAX_WEBHOOK_URL_LENGTH', value: MAX_WEBHOOK_URL_LENGTH, doc: 'Longest `url` of a webhook, characters.' },
  {
    name: 'MAX_WEBHOOK_DESCRIPTION_LENGTH',
    value: MAX_WEBHOOK_DESCRIPTION_LENGTH,
    doc: 'Longest `description` of a webhook, characters (one line).',
  },
  {
    name: 'MAX_DIRECT_UPLOAD_BYTES',
    value: MAX_DIRECT_UPLOAD_BYTES,
    doc: 'Largest archive a direct upload accepts, bytes; a larger one takes a presigned slot.',
  },
  { name: 'MAX_API_CLIENTS_PER_COMPANY', value: MAX_API_CLIENTS_PER_COMPANY, doc: 'Most API clients a company may have.' },
  { name: 'MAX_API_CLIENT_NAME_LENGTH', value: MAX_API_CLIENT_NAME_LENGTH, doc: 'Longest `name` of an API client, characters.' },
  {
    name: 'MAX_PREVIOUS_SECRET_SECONDS',
    value: MAX_PREVIOUS_SECRET_SECONDS,
    doc: "Longest time an API client's previous secret keeps working after a rotation, seconds (24 hours), and the default.",
  },
  { name: 'MAX_COMPANY_NAME_LENGTH', value: MAX_COMPANY_NAME_LENGTH, doc: 'Longest company display name, characters.' },
  { name: 'MAX_EMAIL_LENGTH', value: MAX_EMAIL_LENGTH, doc: "Longest user's email address, characters." },
  {
    name: 'ACCESS_TOKEN_LIFETIME_SECONDS',
    value: ACCESS_TOKEN_LIFETIME_SECONDS,
    doc: "A user's access token lifetime, seconds, unless the service is configured otherwise (its claims tell).",
  },
  { name: 'IDENTIFIER_PATTERN', value: IDENTIFIER_PATTERN, doc: 'A device, scenario or company id.' },
  { name: 'NEW_COMPANY_ID_PATTERN', value: NEW_COMPANY_ID_PATTERN, doc: "A new company's id (lower case only)." },
  { name: 'USERNAME_PATTERN', value: USERNAME_PATTERN, doc: 'A username.' },
  {
    name: 'NEW_COMPANY_ID_HTML_PATTERN',
    value: htmlPattern(NEW_COMPANY_ID_PATTERN),
    doc: "NEW_COMPANY_ID_PATTERN as an input's `pattern`.",
  },
  { name: 'USERNAME_HTML_PATTERN', value: htmlPattern(USERNAME_PATTERN), doc: "USERNAME_PATTERN as an input's `pattern`." },
];

/**
 * A whole-string pattern as an HTML input's `pattern` attribute: without its anchors (the browser anchors it), and
 * with a class's final `-` escaped (the browser compiles it with the `v` flag, where a bare `-` in a class is an
 * error). @throws Error for a pattern that is not anchored at both ends
 */
function htmlPattern(pattern: RegExp): string {
  const { source } = pattern;
  if (!source.startsWith('^') || !source.endsWith('$')) throw new Error(`not a whole-string pattern: ${source}`);
  return source.slice(1, -1).replaceAll('-]', '\\-]');
}

/** A value as TypeScript source: numbers with `_` thousands separators, strings single-quoted, patterns as literals. */
function literal(value: number | string | RegExp): string {
  if (value instanceof RegExp) return String(value);
  if (typeof value === 'string') return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  if (!Number.isSafeInteger(value)) throw new Error(`not a whole number: ${value}`);
  return String(value).replace(/\B(?=(\d{3})+$)/g, '_');
}

const HEADER = `/**
 * The service's limits and patterns that the clients (the CLI and the console) need, generated by \`npm run generate\`
 * from the constants the service enforces (client/generate-limits.ts). Do not edit: a test fails while this file is
 * stale. It imports nothing, so that the console's bundle takes nothing from the service's sources.
 */
`;

/**
 * The contents of client/limits.ts for the current constants.
 * @returns TypeScript source, one documented `export const` per limit, formatted as biome formats the repository
 * @throws Error when a limit cannot be written (a schema without its bound, a pattern not anchored)
 */
export function generatedClientLimits(): string {
  const constants = LIMITS.map(({ name, value, doc }) => `\n/** ${doc} */\nexport const ${name} = ${literal(value)};\n`);
  return `${HEADER}${constants.join('')}`;
}
