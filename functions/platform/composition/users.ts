/**
 * Users administration's ports, in the composition root: the user directory (the local users, or Cognito's user pool
 * on AWS) and the audit log its changes are recorded in.
 */
import { LocalUserDirectory } from '../../adapters/embedded/local-user-directory.js';
import { ENV } from '../../contract/environment.js';
import type { UserDirectory } from '../../core/users/ports.js';
import { cognitoUserDirectory } from './cognito-users.js';
import { identityProvider } from './identity.js';

let local: Promise<UserDirectory> | undefined;

/**
 * The user directory. Locally (LOCAL_AUTH_DIR set): the local identity provider's users, the very store its token
 * endpoint signs in against (the local runtime is one process), built once. On AWS: the Cognito user pool
 * COGNITO_USER_POOL_ID (cognitoUserDirectory).
 * @throws EnvironmentError as identityProvider() does locally; on AWS the directory's first call throws it naming
 *   COGNITO_USER_POOL_ID when that is unset.
 */
export function userDirectory(): Promise<UserDirectory> {
  const directory = process.env[ENV.localAuthDir];
  if (directory === undefined || directory === '') return Promise.resolve(cognitoUserDirectory());
  if (local === undefined) {
    local = identityProvider().then((identity) => new LocalUserDirectory(identity.users));
    local.catch(() => {
      local = undefined;
    });
  }
  return local;
}
