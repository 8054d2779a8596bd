/**
 * The stateful stack: tables, buckets, the Cognito pool, the device token key, and no physical names. Built by
 * lib/stage.ts exactly as bin/app.ts builds them, with bundling skipped (template-helpers.ts).
 */

import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLES, type TableName } from '../../functions/adapters/aws/tables.js';
import { CORS_MAX_AGE_SECONDS } from '../../functions/contract/cors.js';
import { ARCHIVE_UPLOADED, bearerAuthorizer, preTokenGeneration } from '../../functions/contract/functions.js';
import { DEVICE_ISSUER_ENTRY } from '../../functions/contract/routes/device-issuer.js';
import { PASSWORD_POLICY } from '../../functions/core/access/password-policy.js';
import { KEY_ADMINISTRATION_ACTIONS } from '../../lib/device-token-key.js';
import {
  asArray,
  deniesInsecureTransport,
  type Resource,
  resourcesOf,
  type ServiceTemplates,
  type Statement,
  serviceTemplates,
  statementsOf,
  TABLE_ID_PREFIX,
  TOKEN_FUNCTION_ENTRY,
} from './template-helpers.js';

describe('stacks, stateful (bundling skipped)', () => {
  let stateful: ServiceTemplates['stateful'];
  let stateless: ServiceTemplates['stateless'];
  let ours: ServiceTemplates['ours'];
  let statefulFunctions: ServiceTemplates['statefulFunctions'];

  beforeAll(() => {
    ({ stateful, stateless, ours, statefulFunctions } = serviceTemplates());
  });

  it('declares every table of TABLES: on-demand, PITR, encrypted, streams where searched, retained and deletion-protected', () => {
    stateful.resourceCountIs('AWS::DynamoDB::Table', Object.keys(TABLES).length);
    const tables = resourcesOf(stateful, 'AWS::DynamoDB::Table');
    for (const [name, schema] of Object.entries(TABLES) as [TableName, (typeof TABLES)[TableName]][]) {
      const found = tables.filter(([id]) => id.startsWith(TABLE_ID_PREFIX[name]));
      expect(found, name).toHaveLength(1);
      const [, table] = found[0] as [string, Resource];
      expect(table.DeletionPolicy).toBe('Retain');
      expect(table.Properties).toMatchObject({
        DeletionProtectionEnabled: true,
        BillingMode: 'PAY_PER_REQUEST',
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
        SSESpecification: { SSEEnabled: true },
        KeySchema: [
          { AttributeName: schema.partitionKey, KeyType: 'HASH' },
          ...('sortKey' in schema ? [{ AttributeName: schema.sortKey, KeyType: 'RANGE' }] : []),
        ],
      });
      if ('stream' in schema)
        expect(table.Properties?.StreamSpecification, name).toEqual({
          StreamViewType: 'streamView' in schema ? schema.streamView : 'NEW_AND_OLD_IMAGES',
        });
      else expect(table.Properties?.StreamSpecification).toBeUndefined();
      // TTL where TABLES names an attribute (idempotency records, failed client authentications), nowhere else.
      if ('timeToLiveAttribute' in schema)
        expect(table.Properties?.TimeToLiveSpecification, name).toEqual({ AttributeName: schema.timeToLiveAttribute, Enabled: true });
      else expect(table.Properties?.TimeToLiveSpecification, name).toBeUndefined();
      const indexes = (table.Properties?.GlobalSecondaryIndexes as { IndexName: string; KeySchema: unknown }[] | undefined) ?? [];
      expect(indexes.map((index) => ({ name: index.IndexName, keys: index.KeySchema }))).toEqual(
        ('globalSecondaryIndexes' in schema ? schema.globalSecondaryIndexes : []).map((index) => ({
          name: index.indexName,
          keys: [
            { AttributeName: index.partitionKey, KeyType: 'HASH' },
            { AttributeName: index.sortKey, KeyType: 'RANGE' },
          ],
        })),
      );
    }
  });

  it('declares private, encrypted, TLS-only, retained buckets; the archive bucket is versioned, uploads expire, accesses are logged', () => {
    stateful.resourceCountIs('AWS::S3::Bucket', 2);
    for (const [id, bucket] of resourcesOf(stateful, 'AWS::S3::Bucket')) {
      expect(bucket.DeletionPolicy, id).toBe('Retain');
      expect(bucket.Properties, id).toMatchObject({
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
        OwnershipControls: { Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] },
      });
      expect(bucket.Properties?.AccessControl, id).toBeUndefined();
    }
    const [logsId] = resourcesOf(stateful, 'AWS::S3::Bucket').find(([id]) => id.startsWith('AccessLogsBucket')) as [string, Resource];
    stateful.hasResource('AWS::S3::Bucket', {
      Properties: {
        VersioningConfiguration: { Status: 'Enabled' },
        // By default the region's API Gateway endpoints (the operator console's page) may PUT and GET presigned URLs.
        CorsConfiguration: {
          CorsRules: [
            {
              AllowedMethods: ['PUT', 'GET', 'HEAD'],
              AllowedOrigins: [{ 'Fn::Join': ['', ['https://*.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] }],
              AllowedHeaders: ['content-type'],
              ExposedHeaders: ['ETag'],
              MaxAge: CORS_MAX_AGE_SECONDS,
            },
          ],
        },
        LoggingConfiguration: { DestinationBucketName: { Ref: logsId }, LogFilePrefix: 'archive-bucket/' },
        LifecycleConfiguration: {
          Rules: Match.arrayWith([
            Match.objectLike({ AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }),
            Match.objectLike({
              Prefix: ARCHIVE_UPLOADED.prefix,
              ExpirationInDays: 1,
              NoncurrentVersionExpiration: { NoncurrentDays: 1 },
              Status: 'Enabled',
            }),
            Match.objectLike({
              Prefix: Match.absent(),
              NoncurrentVersionExpiration: { NoncurrentDays: 30 },
              ExpiredObjectDeleteMarker: true,
              Status: 'Enabled',
            }),
          ]),
        },
      },
    });
    const policies = resourcesOf(stateful, 'AWS::S3::BucketPolicy');
    expect(policies).toHaveLength(2);
    for (const [id, policy] of policies) expect(deniesInsecureTransport(policy.Properties?.PolicyDocument), id).toBe(true);
  });

  it('issues tokens from a retained Essentials Cognito pool whose V2_0 trigger customizes access tokens, through a secretless USER_PASSWORD_AUTH client', () => {
    const [[, pool]] = resourcesOf(stateful, 'AWS::Cognito::UserPool') as [[string, Resource]];
    expect(pool.DeletionPolicy).toBe('Retain');
    const [triggerId] = statefulFunctions.get(preTokenGeneration.entry) as [string, Resource];
    expect(pool.Properties).toMatchObject({
      AdminCreateUserConfig: { AllowAdminCreateUserOnly: true },
      DeletionProtection: 'ACTIVE',
      UserPoolTier: 'ESSENTIALS',
      LambdaConfig: { PreTokenGenerationConfig: { LambdaArn: { 'Fn::GetAtt': [triggerId, 'Arn'] }, LambdaVersion: 'V2_0' } },
      Policies: {
        PasswordPolicy: {
          MinimumLength: PASSWORD_POLICY.minLength,
          RequireLowercase: true,
          RequireUppercase: true,
          RequireNumbers: true,
          RequireSymbols: true,
        },
      },
      Schema: expect.arrayContaining([
        expect.objectContaining({ Name: 'companies', Mutable: true }),
        expect.objectContaining({ Name: 'scope', Mutable: true }),
      ]),
    });
    stateful.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      Principal: 'cognito-idp.amazonaws.com',
      FunctionName: { 'Fn::GetAtt': [triggerId, 'Arn'] },
    });
    const [[, client]] = resourcesOf(stateful, 'AWS::Cognito::UserPoolClient') as [[string, Resource]];
    expect(client.Properties).toMatchObject({
      ExplicitAuthFlows: ['ALLOW_USER_PASSWORD_AUTH', 'ALLOW_REFRESH_TOKEN_AUTH'],
      GenerateSecret: false,
      AllowedOAuthFlowsUserPoolClient: false,
      PreventUserExistenceErrors: 'ENABLED',
      // The token endpoint returns the access token: its lifetime is the contract's expires_in (15 min, as locally).
      AccessTokenValidity: 15,
      IdTokenValidity: 15,
      RefreshTokenValidity: 43_200,
    });
    // Users must not be able to grant themselves companies or scopes.
    const writable = client.Properties?.WriteAttributes as string[];
    expect(writable.length).toBeGreaterThan(0);
    expect(writable.filter((attribute) => attribute.startsWith('custom:'))).toEqual([]);
  });

  it('signs device tokens with a retained P-256 KMS key whose policy lets only the token function sign and the issuer and authorizer functions read it', () => {
    const keys = resourcesOf(stateful, 'AWS::KMS::Key');
    expect(keys).toHaveLength(1);
    const [, key] = keys[0] as [string, Resource];
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.UpdateReplacePolicy).toBe('Retain');
    expect(key.Properties).toMatchObject({ KeySpec: 'ECC_NIST_P256', KeyUsage: 'SIGN_VERIFY' });
    const roleIdOf = (entry: string) =>
      (
        resourcesOf(stateful, 'AWS::IAM::Role').find(([, role]) =>
          String(role.Properties?.Description).startsWith(`Execution role of ${entry} `),
        ) as [string, Resource]
      )[0];
    const statements = (key.Properties?.KeyPolicy as { Statement: (Statement & { Condition?: unknown })[] }).Statement;
    expect(statements).toHaveLength(3);
    // The account administers the key and may not use it: no IAM policy can grant a signature.
    const [admin, sign, read] = statements as [Statement, Statement & { Condition?: unknown }, Statement];
    expect(JSON.stringify(admin.Principal)).toContain(':root');
    expect(asArray(admin.Action).sort()).toEqual([...KEY_ADMINISTRATION_ACTIONS].sort());
    expect(
      asArray(admin.Action).filter((action) => /\*|Sign|Verify|GetPublicKey|Decrypt|Encrypt|GenerateDataKey|CreateGrant/.test(action)),
    ).toEqual([]);
    expect(sign).toMatchObject({
      Effect: 'Allow',
      Action: 'kms:Sign',
      Principal: { AWS: { 'Fn::GetAtt': [roleIdOf(TOKEN_FUNCTION_ENTRY), 'Arn'] } },
      Condition: { StringEquals: { 'kms:SigningAlgorithm': 'ECDSA_SHA_256', 'kms:MessageType': 'DIGEST' } },
    });
    expect(read).toMatchObject({ Effect: 'Allow', Action: 'kms:GetPublicKey' });
    expect(
      asArray((read.Principal as { AWS: unknown }).AWS)
        .map((principal) => (principal as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0])
        .sort(),
    ).toEqual([roleIdOf(DEVICE_ISSUER_ENTRY), roleIdOf(bearerAuthorizer.entry)].sort());
    // Those functions run with those roles (imported by the stateless stack).
    for (const entry of [TOKEN_FUNCTION_ENTRY, DEVICE_ISSUER_ENTRY, bearerAuthorizer.entry]) {
      expect(JSON.stringify(ours.get(entry)?.[1].Properties?.Role), entry).toContain('Fn::ImportValue');
      expect(JSON.stringify(ours.get(entry)?.[1].Properties?.Role), entry).toContain(roleIdOf(entry));
    }
    // No other role of either stack is granted any KMS action.
    for (const template of [stateful, stateless]) {
      for (const [id, statement] of statementsOf(template)) {
        if (asArray(statement.Action).some((action) => action.startsWith('kms:'))) {
          expect(id, JSON.stringify(statement)).toMatch(/^(AuthCognitoTokenFunction|DeviceIssuerFunction|BearerAuthorizerFunction)/);
        }
      }
    }
  });

  it('names no physical resource (several stages share an account)', () => {
    const named: Record<string, string> = {
      'AWS::DynamoDB::Table': 'TableName',
      'AWS::S3::Bucket': 'BucketName',
      'AWS::Lambda::Function': 'FunctionName',
      'AWS::SQS::Queue': 'QueueName',
      'AWS::IAM::Role': 'RoleName',
      'AWS::Logs::LogGroup': 'LogGroupName',
      'AWS::OpenSearchService::Domain': 'DomainName',
      'AWS::Cognito::UserPool': 'UserPoolName',
      'AWS::SNS::Topic': 'TopicName',
      'AWS::CloudWatch::Alarm': 'AlarmName',
      'AWS::Events::EventBus': 'Name',
      'AWS::SecretsManager::Secret': 'Name',
    };
    for (const template of [stateful, stateless]) {
      for (const [type, property] of Object.entries(named)) {
        for (const [id, resource] of resourcesOf(template, type)) {
          if (type === 'AWS::Events::EventBus') expect(resource.Properties?.[property], id).toMatch(/^DeviceScenarioServicetestStateless/);
          else expect(resource.Properties?.[property], id).toBeUndefined();
        }
      }
    }
  });
});
