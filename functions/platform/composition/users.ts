/**
 * Users administration's ports, in the composition root: the user directory (the local users, or Cognito's user pool
 * on AWS) and the audit log its changes are recorded in.
 */
import { LocalUserDirectory } from '../../adapters/embedded/local-user-directory.js';
import { ENV } from '../../contract/environment.js';
import type { AuditLog } from '../../core/audit/ports.js';
import type { UserDirectory } from '../../core/users/ports.js';
import { logger } from '../logger.js';
import { identityProvider } from './identity.js';

let directory: Promise<UserDirectory> | undefined;

/**
 * The user directory, built once. Locally (LOCAL_AUTH_DIR set): the local identity provider's users, the very store
 * its token endpoint signs in against (the local runtime is one process). On AWS: Cognito's user pool.
 * @throws Error naming COGNITO_USER_POOL_ID on AWS, where the Cognito directory is not wired yet; EnvironmentError as
 *   identityProvider() does locally.
 */
export function userDirectory(): Promise<UserDirectory> {
  if (directory === undefined) {
    if (process.env[ENV.localAuthDir] === undefined || process.env[ENV.localAuthDir] === '') {
      const error = new Error(
        'Invalid environment (user directory): LOCAL_AUTH_DIR is not set and the Cognito user directory (COGNITO_USER_POOL_ID) is not available in this build.',
      );
      error.name = 'EnvironmentError';
      throw error;
    }
    directory = identityProvider().then((identity) => new LocalUserDirectory(identity.users));
    directory.catch(() => {
      directory = undefined;
    });
  }
  return directory;
}

/**
 * Where users administration records its changes until the audit table is wired: the function's log, one `audit`
 * line per entry (before and after hold no password).
 */
const loggedAuditLog: AuditLog = {
  async record(entry) {
    logger.info('audit', { audit: entry });
  },
  async list() {
    return { items: [], nextCursor: null };
  },
};

/** The audit log users administration records its changes in. */
export function userAuditLog(): AuditLog {
  return loggedAuditLog;
}
