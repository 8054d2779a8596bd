/**
 * Imported first by bin/local.ts, before any module of the service is evaluated: settings that modules read when
 * they load. No X-Ray daemon runs locally, so tracing is off, and with it the X-Ray SDK is never loaded (see
 * functions/platform/observability.ts).
 */
import { ENV } from '../contract/environment.js';

process.env[ENV.powertoolsTraceEnabled] = 'false';
