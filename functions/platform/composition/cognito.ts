/** The user sign-in on AWS, in the composition root: Cognito behind the IdentityProvider port. */
import { CognitoIdentityProviderClient } from '@aws-sdk/client-cognito-identity-provider';
import { CognitoSignIn } from '../../adapters/aws/cognito-sign-in.js';
import type { IdentityProvider } from '../../core/access/ports.js';
import { cognitoClientId } from '../config.js';
import { logger } from '../logger.js';
import { traced } from '../observability.js';

let cognito: IdentityProvider | undefined;

/**
 * Cognito's sign-in on the app client COGNITO_CLIENT_ID (read on each sign-in), on one traced client built on first
 * use.
 */
export function cognitoIdentityProvider(): IdentityProvider {
  cognito ??= new CognitoSignIn(traced(new CognitoIdentityProviderClient({})), cognitoClientId, logger);
  return cognito;
}
