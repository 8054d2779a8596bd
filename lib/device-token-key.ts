/**
 * The KMS key that signs device tokens (ECC_NIST_P256, SIGN_VERIFY: ES256), with the execution roles of the functions
 * whose access names `deviceKey`, so that its key policy can name them: the signer (the token function) may only Sign
 * (a SHA-256 digest, ECDSA_SHA_256), the public key reader (the device issuer function) may only read the public key. The account keeps the administration of
 * the key (describe, policy, tags, enable/disable, deletion) and no use of it, so no IAM policy can grant anyone else
 * a signature. KMS does not rotate asymmetric keys (cdk-nag's rotation rule covers symmetric keys only); rotating means a
 * new key, whose kid the key set publishes. Retained: a re-created stack keeps the key; a new key would only make tokens of the old one fail
 * verification until devices fetch new ones (at most DEVICE_TOKEN_LIFETIME_SECONDS later).
 */
import { RemovalPolicy } from 'aws-cdk-lib';
import { AccountRootPrincipal, PolicyDocument, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import type { DeviceKeyUse } from '../functions/contract/route.js';
import { functionIdOf } from './service-function.js';

/** What the account may do with the key: administer it, never use it. Explicit actions, no wildcard. */
export const KEY_ADMINISTRATION_ACTIONS = [
  'kms:DescribeKey',
  'kms:GetKeyPolicy',
  'kms:PutKeyPolicy',
  'kms:GetKeyRotationStatus',
  'kms:ListResourceTags',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:UpdateKeyDescription',
  'kms:EnableKey',
  'kms:DisableKey',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
  'kms:CreateAlias',
  'kms:DeleteAlias',
  'kms:UpdateAlias',
  'kms:ListGrants',
  'kms:RevokeGrant',
] as const;

/** The KMS action of each DeviceKeyUse: the key policy allows exactly these, each to the roles of its users. */
export const DEVICE_KEY_ACTIONS: Readonly<Record<DeviceKeyUse, 'kms:Sign' | 'kms:GetPublicKey'>> = {
  sign: 'kms:Sign',
  publicKey: 'kms:GetPublicKey',
};

/** The key and the functions that use it. */
export interface DeviceTokenKeyProps {
  /** The use each function makes of the key, by handler module (the functions whose access names `deviceKey`). */
  users: ReadonlyMap<string, DeviceKeyUse>;
}

/** The device token key and the roles of the functions that use it (see the module comment). */
export class DeviceTokenKey extends Construct {
  readonly key: Key;
  /** Execution role of each user of the key, by handler module (the stateless stack imports them). */
  readonly roles: ReadonlyMap<string, Role>;

  constructor(scope: Construct, id: string, props: DeviceTokenKeyProps) {
    super(scope, id);
    const roles = new Map<string, Role>();
    for (const [entry, use] of props.users) {
      roles.set(
        entry,
        new Role(this, `${functionIdOf(entry)}Role`, {
          assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
          description: `Execution role of ${entry} (device token key: ${DEVICE_KEY_ACTIONS[use]})`,
        }),
      );
    }
    const rolesOf = (use: DeviceKeyUse): Role[] => {
      const users = [...props.users].filter(([, candidate]) => candidate === use).map(([entry]) => roles.get(entry) as Role);
      if (users.length === 0)
        throw new Error(`No function's access names deviceKey '${use}': the device token key has no use without one.`);
      return users;
    };
    this.key = new Key(this, 'Key', {
      description: 'Signs the device tokens of the device scenario service (ES256); the private key never leaves KMS.',
      keySpec: KeySpec.ECC_NIST_P256,
      keyUsage: KeyUsage.SIGN_VERIFY,
      removalPolicy: RemovalPolicy.RETAIN,
      // A policy given here replaces CDK's default one, which would let the account (hence any IAM policy) use the key.
      policy: new PolicyDocument({
        statements: [
          new PolicyStatement({
            sid: 'AccountAdministersTheKey',
            principals: [new AccountRootPrincipal()],
            actions: [...KEY_ADMINISTRATION_ACTIONS],
            resources: ['*'],
          }),
          new PolicyStatement({
            sid: 'TokenFunctionSignsDigests',
            principals: rolesOf('sign'),
            actions: [DEVICE_KEY_ACTIONS.sign],
            resources: ['*'],
            conditions: { StringEquals: { 'kms:SigningAlgorithm': 'ECDSA_SHA_256', 'kms:MessageType': 'DIGEST' } },
          }),
          new PolicyStatement({
            sid: 'IssuerFunctionReadsThePublicKey',
            principals: rolesOf('publicKey'),
            actions: [DEVICE_KEY_ACTIONS.publicKey],
            resources: ['*'],
          }),
        ],
      }),
    });
    this.roles = roles;
  }
}
