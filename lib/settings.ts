/**
 * Customer parameters of the CDK app: read once from CDK context (`cdk.json` or `-c key=value`), validated, with the
 * documented defaults below. Nothing else in lib/ reads context, so this table is the whole list (docs/aws.md,
 * "Parameters (CDK context)").
 *
 * | context key               | default           | meaning                                                        |
 * |---------------------------|-------------------|----------------------------------------------------------------|
 * | `stage`                   | `dev`             | suffix of the stack names; several stages live in one account  |
 * | `logLevel`                | `INFO`            | Powertools log level of every function                         |
 * | `logRetentionDays`        | `30`              | retention of function, API access and OpenSearch logs (days)   |
 * | `corsAllowedOrigins`      | see below         | browser origins allowed on the three APIs and presigned PUTs   |
 * | `opensearchInstanceType`  | `t3.small.search` | data node instance type                                        |
 * | `opensearchInstanceCount` | `1`               | data nodes (2 or more: zone awareness across 2 or 3 AZs)       |
 * | `opensearchVolumeGiB`     | `10`              | gp3 volume per data node                                       |
 * | `cognitoFeaturePlan`      | `ESSENTIALS`      | `ESSENTIALS` or `PLUS` (PLUS adds threat protection, per MAU)  |
 * | `deviceHeartbeatSeconds`  | `300`             | a connected device silent this long becomes DISCONNECTED       |
 * | `deviceTokenLifetimeSeconds` | `900`          | lifetime of device tokens (60 to 900 seconds)                  |
 * | `authRateLimit`           | `200`             | POST /token: steady requests per second (its own bucket)       |
 * | `authBurstLimit`          | `400`             | POST /token: requests it takes at once above the steady rate   |
 * | `webhookAllowedHttpHosts` | empty             | hosts webhooks may use plain http with (WEBHOOK_ALLOWED_HTTP_HOSTS) |
 *
 * Without `corsAllowedOrigins`, CORS serves the operator console at `{base_url}/console`: the upload and auth APIs
 * allow the main API's origin, the main API needs none (same origin), and the archive bucket allows the region's
 * API Gateway endpoints (`https://*.execute-api.<region>.amazonaws.com`). A custom domain needs it set.
 */
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Node } from 'constructs';
import { LOG_LEVELS } from '../functions/contract/environment.js';

/**
 * First part of every stack name (`<prefix>-<stage>-Stateful`), and so of the log group names CloudFormation generates
 * in them (`<stack name>-<logical id>-<suffix>`): the shared CloudWatch Logs resource policy of the OpenSearch logs
 * covers `<prefix>-*` (lib/search-domain.ts). Changing it strands the existing stacks.
 */
export const SERVICE_STACK_PREFIX = 'DeviceScenarioService';

/** Cognito user pool feature plans this app supports (V2_0 token customization needs ESSENTIALS or PLUS). */
export type CognitoPlan = 'ESSENTIALS' | 'PLUS';

/** Every customer parameter, validated. */
export interface ServiceSettings {
  stage: string;
  logLevel: string;
  logRetention: RetentionDays;
  /**
   * Exact origins (`https://app.example.com`) or `*`, on the three APIs and the archive bucket; empty: the console's
   * defaults (the upload and auth APIs allow the main API's origin, the bucket the region's API Gateway endpoints).
   */
  corsAllowedOrigins: string[];
  opensearch: { instanceType: string; instanceCount: number; volumeGiB: number };
  cognitoFeaturePlan: CognitoPlan;
  /** The device side (DEVICE_HEARTBEAT_SECONDS, DEVICE_TOKEN_LIFETIME_SECONDS of the functions that read them), seconds. */
  devices: { heartbeatSeconds: number; tokenLifetimeSeconds: number };
  /**
   * Throttling of the token route (POST /token, a bucket of its own on the auth API's stage), requests per second and
   * burst; the stage's other routes (the key sets, the discovery document) get the same figures in another bucket.
   * What bounds the cost of wrong secrets on AWS (each costs a hash): the attempt count limits each client id and
   * address, this the total. Shared by every caller: it is no per-caller limit (docs/contract.md).
   */
  authThrottle: { rateLimit: number; burstLimit: number };
  /**
   * WEBHOOK_ALLOWED_HTTP_HOSTS of the functions that check or send to webhook URLs: hosts a webhook may use plain http
   * with, comma-separated; empty (the default): https only.
   */
  webhookAllowedHttpHosts: string;
}

/** The defaults of ServiceSettings (docs/aws.md, "Parameters (CDK context)"). */
export const DEFAULT_SETTINGS: Readonly<ServiceSettings> = {
  stage: 'dev',
  logLevel: 'INFO',
  logRetention: RetentionDays.ONE_MONTH,
  corsAllowedOrigins: [],
  opensearch: { instanceType: 't3.small.search', instanceCount: 1, volumeGiB: 10 },
  cognitoFeaturePlan: 'ESSENTIALS',
  devices: { heartbeatSeconds: 300, tokenLifetimeSeconds: 900 },
  // 100,000 devices renewing a 15-minute token make ~111 token requests a second: twice that, and a burst of twice
  // again for a fleet reconnecting at once. At that rate wrong secrets cost at most ~200 hashes a second (a few
  // concurrent executions), whoever sends them.
  authThrottle: { rateLimit: 200, burstLimit: 400 },
  webhookAllowedHttpHosts: '',
};

/** Retention values CloudWatch Logs accepts (RetentionDays), in days. */
const RETENTION_VALUES = new Set(Object.values(RetentionDays).filter((value): value is number => typeof value === 'number'));

/**
 * Reads and validates the customer parameters from `node`'s context; an absent key takes its default.
 * @throws Error naming the context key and what it accepts.
 */
export function readServiceSettings(node: Node): ServiceSettings {
  const context = (key: string): unknown => {
    const value: unknown = node.tryGetContext(key);
    return value === null || value === '' ? undefined : value;
  };
  // Validated in this order: of several invalid keys, the first is the one reported.
  const stage = stageSetting(context('stage'));
  const logLevel = logLevelSetting(context('logLevel'));
  const logRetention = retentionSetting(context('logRetentionDays'));
  const instanceType = instanceTypeSetting(context('opensearchInstanceType'));
  const cognitoFeaturePlan = planSetting(context('cognitoFeaturePlan'));
  return {
    stage,
    logLevel,
    logRetention,
    corsAllowedOrigins: originsSetting(context('corsAllowedOrigins')),
    opensearch: opensearchSettings(context, instanceType),
    cognitoFeaturePlan,
    devices: deviceSettings(context),
    // API Gateway's account defaults (10,000 requests a second, a burst of 5,000 per region) bound a stage's settings.
    authThrottle: {
      rateLimit: integerSetting('authRateLimit', context('authRateLimit'), DEFAULT_SETTINGS.authThrottle.rateLimit, 1, 10_000),
      burstLimit: integerSetting('authBurstLimit', context('authBurstLimit'), DEFAULT_SETTINGS.authThrottle.burstLimit, 1, 5_000),
    },
    webhookAllowedHttpHosts: webhookHostsSetting(context('webhookAllowedHttpHosts')),
  };
}

/** `webhookAllowedHttpHosts`: host names or IP addresses separated by commas, or nothing. */
function webhookHostsSetting(value: unknown): string {
  const hosts = stringSetting('webhookAllowedHttpHosts', value, DEFAULT_SETTINGS.webhookAllowedHttpHosts);
  if (hosts !== '' && !/^\s*[^\s,]+\s*(,\s*[^\s,]+\s*)*$/.test(hosts)) {
    throw new Error(`CDK context 'webhookAllowedHttpHosts' must be host names or IP addresses separated by commas; got '${hosts}'.`);
  }
  return hosts;
}

/** A context key's value, undefined when absent (null and '' count as absent). */
type ContextReader = (key: string) => unknown;

/** `stage`: lowercase letters, digits and dashes, at most 20, starting with a letter. */
function stageSetting(value: unknown): string {
  const stage = stringSetting('stage', value, DEFAULT_SETTINGS.stage);
  if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
    throw new Error(
      `CDK context 'stage' must be lowercase letters, digits and dashes (at most 20, starting with a letter); got '${stage}'.`,
    );
  }
  return stage;
}

/** `logLevel`: one of LOG_LEVELS, any case. */
function logLevelSetting(value: unknown): string {
  const logLevel = stringSetting('logLevel', value, DEFAULT_SETTINGS.logLevel).toUpperCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new Error(`CDK context 'logLevel' must be one of ${LOG_LEVELS.join(', ')}; got '${logLevel}'.`);
  return logLevel;
}

/** `logRetentionDays`: a value CloudWatch Logs accepts. */
function retentionSetting(value: unknown): RetentionDays {
  const retentionDays = integerSetting('logRetentionDays', value, DEFAULT_SETTINGS.logRetention, 1, 9999);
  if (!RETENTION_VALUES.has(retentionDays)) {
    throw new Error(
      `CDK context 'logRetentionDays' must be one of ${[...RETENTION_VALUES].sort((a, b) => a - b).join(', ')}; got ${retentionDays}.`,
    );
  }
  return retentionDays as RetentionDays;
}

/** `opensearchInstanceType`: an OpenSearch instance type (`<family>.<size>.search`). */
function instanceTypeSetting(value: unknown): string {
  const instanceType = stringSetting('opensearchInstanceType', value, DEFAULT_SETTINGS.opensearch.instanceType);
  if (!/^[a-z0-9]+\.[a-z0-9]+\.search$/.test(instanceType)) {
    throw new Error(
      `CDK context 'opensearchInstanceType' must be an OpenSearch instance type such as 't3.small.search'; got '${instanceType}'.`,
    );
  }
  return instanceType;
}

/** The domain's sizing: `instanceType`, `opensearchInstanceCount` (1 to 80) and `opensearchVolumeGiB` (10 to 16,384). */
function opensearchSettings(context: ContextReader, instanceType: string): ServiceSettings['opensearch'] {
  return {
    instanceType,
    instanceCount: integerSetting(
      'opensearchInstanceCount',
      context('opensearchInstanceCount'),
      DEFAULT_SETTINGS.opensearch.instanceCount,
      1,
      80,
    ),
    volumeGiB: integerSetting('opensearchVolumeGiB', context('opensearchVolumeGiB'), DEFAULT_SETTINGS.opensearch.volumeGiB, 10, 16_384),
  };
}

/** `cognitoFeaturePlan`: ESSENTIALS or PLUS, any case. */
function planSetting(value: unknown): CognitoPlan {
  const plan = stringSetting('cognitoFeaturePlan', value, DEFAULT_SETTINGS.cognitoFeaturePlan).toUpperCase();
  if (plan !== 'ESSENTIALS' && plan !== 'PLUS')
    throw new Error(`CDK context 'cognitoFeaturePlan' must be ESSENTIALS or PLUS; got '${plan}'.`);
  return plan;
}

/** The device side, within the bounds of the functions' environment schema (functions/contract/environment.ts, `devices`). */
function deviceSettings(context: ContextReader): ServiceSettings['devices'] {
  return {
    heartbeatSeconds: integerSetting(
      'deviceHeartbeatSeconds',
      context('deviceHeartbeatSeconds'),
      DEFAULT_SETTINGS.devices.heartbeatSeconds,
      1,
      86_400,
    ),
    tokenLifetimeSeconds: integerSetting(
      'deviceTokenLifetimeSeconds',
      context('deviceTokenLifetimeSeconds'),
      DEFAULT_SETTINGS.devices.tokenLifetimeSeconds,
      60,
      900,
    ),
  };
}

function stringSetting(key: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== 'string') throw new Error(`CDK context '${key}' must be a string; got ${JSON.stringify(value)}.`);
  return value.trim();
}

/** A whole number in [min, max], given as a number (cdk.json) or a numeric string (`-c key=42`). */
function integerSetting(key: string, value: unknown, fallback: number, min: number, max: number): number {
  if (value === undefined) return fallback;
  const parsed = typeof value === 'number' ? value : typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isInteger(parsed) || parsed < min || parsed > max) {
    throw new Error(`CDK context '${key}' must be a whole number from ${min} to ${max}; got ${JSON.stringify(value)}.`);
  }
  return parsed;
}

/**
 * A list of origins: a JSON array (cdk.json) or a comma-separated string (`-c corsAllowedOrigins=https://a,https://b`).
 * Each is `*` or `scheme://host[:port]` without a path.
 */
function originsSetting(value: unknown): string[] {
  if (value === undefined) return [...DEFAULT_SETTINGS.corsAllowedOrigins];
  const items = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : undefined;
  if (items === undefined || !items.every((item) => typeof item === 'string')) {
    throw new Error(
      `CDK context 'corsAllowedOrigins' must be a list of origins or a comma-separated string; got ${JSON.stringify(value)}.`,
    );
  }
  const origins = [...new Set((items as string[]).map((item) => item.trim()).filter((item) => item !== ''))];
  for (const origin of origins) {
    if (origin !== '*' && !/^https?:\/\/[A-Za-z0-9.-]+(:\d{1,5})?$/.test(origin)) {
      throw new Error(
        `CDK context 'corsAllowedOrigins': '${origin}' is not an origin such as 'https://app.example.com' (no path, no trailing slash) or '*'.`,
      );
    }
  }
  return origins;
}
