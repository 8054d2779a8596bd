import { Logger } from '@aws-lambda-powertools/logger';

/** The process-wide structured logger (Powertools). `POWERTOOLS_LOG_LEVEL` sets the level (default INFO). */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'device-scenario-service' });
