import { Logger } from '@aws-lambda-powertools/logger';
import { ENV, readEnvironment } from '../contract/environment.js';

/**
 * The process-wide structured logger (Powertools). `POWERTOOLS_LOG_LEVEL` sets the level (default INFO; Powertools
 * reads it itself) and `POWERTOOLS_SERVICE_NAME` the service name; both are checked here, at cold start.
 * @throws EnvironmentError (on import) naming POWERTOOLS_LOG_LEVEL when it is not a Powertools level.
 */
export const logger = new Logger({ serviceName: readEnvironment('function', process.env)[ENV.powertoolsServiceName] });
