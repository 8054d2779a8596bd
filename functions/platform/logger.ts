import { Logger, type LogItem } from '@aws-lambda-powertools/logger';
import { ENV, readEnvironment } from '../contract/environment.js';

/**
 * Keys every Powertools log line carries (service, Lambda context, sampling) or that only matter when searching the
 * JSON logs (the request id): left out of the readable lines, where they would hide what the line says.
 */
const CONTEXT_KEYS = new Set([
  'level',
  'message',
  'timestamp',
  'service',
  'cold_start',
  'function_arn',
  'function_memory_size',
  'function_name',
  'function_request_id',
  'sampling_rate',
  'xray_trace_id',
  'correlation_id',
  'requestId',
  'route',
]);

/** The message of the one summary line logged per HTTP request (observability.ts). */
export const REQUEST_COMPLETED = 'request completed';

/** Whether log lines print as readable text (LOG_FORMAT=text, what the local runtime sets) instead of JSON. */
export function readableLogs(): boolean {
  return process.env[ENV.logFormat]?.toLowerCase() === 'text';
}

function errorText(value: unknown): string | undefined {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  if (typeof value === 'object' && value !== null && 'message' in value && 'name' in value)
    return `${String(value.name)}: ${String(value.message)}`;
  return undefined;
}

function valueText(value: unknown): string {
  const error = errorText(value);
  if (error !== undefined) return JSON.stringify(error);
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One readable line for a log item: `HH:MM:SS.mmm LEVEL message key=value…`. The request summary reads as an access
 * log line (`GET /path 201 12 ms company=acme caller=alice`); an error's stack follows on the next lines at ERROR and
 * above, where a developer needs it.
 */
export function readableLine(attributes: Record<string, unknown>): string {
  const time = typeof attributes.timestamp === 'string' ? attributes.timestamp.slice(11, 23) : new Date().toISOString().slice(11, 23);
  const level = String(attributes.level ?? 'INFO').padEnd(5);
  const rest = Object.entries(attributes).filter(([key, value]) => !CONTEXT_KEYS.has(key) && value !== undefined);
  let head = String(attributes.message ?? '');
  let fields = rest;
  if (attributes.message === REQUEST_COMPLETED && typeof attributes.method === 'string') {
    head = `${attributes.method} ${String(attributes.path)} ${String(attributes.status)} ${String(attributes.latencyMs)} ms`;
    fields = rest.filter(([key]) => !['method', 'path', 'status', 'latencyMs'].includes(key));
  }
  const line = [time, level, head, ...fields.map(([key, value]) => `${key}=${valueText(value)}`)].join(' ');
  const error = attributes.error as { stack?: unknown } | undefined;
  const stack = typeof error?.stack === 'string' ? error.stack : Array.isArray(error?.stack) ? error.stack.join('\n') : undefined;
  const severe = level.trim() === 'ERROR' || level.trim() === 'CRITICAL';
  return severe && stack !== undefined ? `${line}\n${stack.split('\n').slice(1).join('\n')}` : line;
}

/**
 * Powertools Logger that prints JSON (Lambda: CloudWatch Logs, searchable with Logs Insights) or, with
 * LOG_FORMAT=text (read at each line, so that the local runtime can set it after this module is loaded), one readable
 * line per item (readableLine): WARN and above on stderr, the rest on stdout.
 */
class ServiceLogger extends Logger {
  protected override printLog(logLevel: number, log: LogItem): void {
    if (!readableLogs()) {
      super.printLog(logLevel, log);
      return;
    }
    const attributes = log.getAttributes() as Record<string, unknown>;
    const level = String(attributes.level ?? '');
    const stream = level === 'WARN' || level === 'ERROR' || level === 'CRITICAL' ? process.stderr : process.stdout;
    stream.write(`${readableLine(attributes)}\n`);
  }
}

/**
 * The `service` of every log line, metric and trace: POWERTOOLS_SERVICE_NAME (set by the CDK), else the same name.
 * Read at cold start with the other variables every function gets.
 * @throws EnvironmentError (on import) naming POWERTOOLS_LOG_LEVEL or another such variable when it is malformed.
 */
export const SERVICE_NAME = readEnvironment('function', process.env)[ENV.powertoolsServiceName];

/** The process-wide structured logger (Powertools). `POWERTOOLS_LOG_LEVEL` sets the level (default INFO). */
export const logger: Logger = new ServiceLogger({ serviceName: SERVICE_NAME });
