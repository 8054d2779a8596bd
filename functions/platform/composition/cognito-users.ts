/** The directory of users on AWS, in the composition root: the Cognito user pool behind the UserDirectory port. */
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { CognitoUserDirectory } from '../../adapters/aws/cognito-user-directory.js';
import type { UserDirectory } from '../../core/users/ports.js';
import { cognitoUserPoolId } from '../config.js';
import { traced } from '../observability.js';

let directory: UserDirectory | undefined;

/**
 * The users of the pool COGNITO_USER_POOL_ID (read on each call, so that a function without it fails on its first
 * use with the variable's name), on one traced client built on first use. The function needs the `cognito-idp`
 * actions its route's `access.userPool` lists; the stack grants exactly those, on this pool only.
 */
export function cognitoUserDirectory(): UserDirectory {
  directory ??= new CognitoUserDirectory(traced(new CognitoIdentityProviderClient({})), cognitoUserPoolId);
  return directory;
}
