/**
 * Customer parameters from CDK context: both stacks built with every setting changed (lib/settings.ts).
 */
import type { App } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { templateVersion } from '../../functions/adapters/aws/opensearch-indexes.js';
import { SEARCH_INDEX_SETUP_ENTRY, SEARCH_REINDEX_ENTRY } from '../../functions/contract/functions.js';
import { DEVICE_ISSUER_ROUTES } from '../../functions/contract/routes/device-issuer.js';
import { THROTTLE } from '../../lib/constructs/http-apis.js';
import type { ServiceStage } from '../../lib/stage.js';
import { acknowledgmentsOf, functionsByEntry, quickStage, resourcesOf, runNag } from './template-helpers.js';

describe('customer parameters from CDK context', () => {
  let app: App;
  let stage: ServiceStage;
  let stateful: Template;
  let stateless: Template;

  beforeAll(() => {
    ({ app, stage, stateful, stateless } = quickStage({
      stage: 'staging',
      logRetentionDays: '90',
      corsAllowedOrigins: 'https://console.example.com,http://localhost:5173',
      opensearchInstanceType: 'r7g.large.search',
      opensearchInstanceCount: '2',
      opensearchVolumeGiB: '50',
      cognitoFeaturePlan: 'PLUS',
      logLevel: 'debug',
      authRateLimit: '50',
      authBurstLimit: 80,
    }));
  });

  it('throttles the token and revocation routes, each in a bucket of its own at the given rate and burst, apart from the key sets and discovery document', () => {
    const apiIds = new Map(resourcesOf(stateless, 'AWS::ApiGatewayV2::Api').map(([id]) => [id.replace(/[0-9A-F]{8}$/, ''), id]));
    const stageOf = (api: string) =>
      resourcesOf(stateless, 'AWS::ApiGatewayV2::Stage').find(
        ([, candidate]) => (candidate.Properties?.ApiId as { Ref: string }).Ref === apiIds.get(api),
      )?.[1].Properties ?? {};
    const auth = stageOf('AuthApi');
    // POST /token and POST /revoke alone have route settings, a bucket each: the routes a device authorizer fetches
    // (discovery document, key set) and the Cognito key set stay in the stage's default bucket, which a flood of token
    // or revocation requests does not drain.
    expect(auth.RouteSettings).toEqual({
      'POST /token': { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 },
      'POST /revoke': { ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 },
    });
    const authRouteKeys = resourcesOf(stateless, 'AWS::ApiGatewayV2::Route')
      .filter(([, route]) => (route.Properties?.ApiId as { Ref: string }).Ref === apiIds.get('AuthApi'))
      .map(([, route]) => route.Properties?.RouteKey);
    expect(authRouteKeys).toEqual(
      expect.arrayContaining([
        'POST /token',
        'POST /revoke',
        'GET /.well-known/jwks.json',
        ...DEVICE_ISSUER_ROUTES.map((route) => `GET ${route.path}`),
      ]),
    );
    expect(auth.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 80 });
    expect(stageOf('MainApi').DefaultRouteSettings).toEqual({
      ThrottlingRateLimit: THROTTLE.main.rateLimit,
      ThrottlingBurstLimit: THROTTLE.main.burstLimit,
    });
  });

  it('names the stacks after the stage', () => {
    expect([stage.stateful.stackName, stage.stateless.stackName]).toEqual([
      'DeviceScenarioService-staging-Stateful',
      'DeviceScenarioService-staging-Stateless',
    ]);
  });

  it('sizes the OpenSearch domain, with zone awareness for two nodes', () => {
    stateful.hasResourceProperties('AWS::OpenSearchService::Domain', {
      ClusterConfig: {
        InstanceType: 'r7g.large.search',
        InstanceCount: 2,
        ZoneAwarenessEnabled: true,
        ZoneAwarenessConfig: { AvailabilityZoneCount: 2 },
      },
      EBSOptions: { VolumeSize: 50, VolumeType: 'gp3' },
    });
  });

  it('allows the given origins on the three APIs and on presigned PUTs to the archive bucket', () => {
    const origins = ['https://console.example.com', 'http://localhost:5173'];
    for (const [id, api] of resourcesOf(stateless, 'AWS::ApiGatewayV2::Api')) {
      expect(api.Properties?.CorsConfiguration, id).toMatchObject({
        // Exactly these, the main API's own origin not added.
        AllowOrigins: origins,
        AllowHeaders: expect.arrayContaining(['authorization', 'content-type']),
      });
    }
    stateful.hasResourceProperties('AWS::S3::Bucket', {
      CorsConfiguration: {
        CorsRules: [
          Match.objectLike({ AllowedMethods: Match.arrayWith(['PUT']), AllowedOrigins: origins, AllowedHeaders: ['content-type'] }),
        ],
      },
    });
    // Exactly those: no API Gateway wildcard beside them.
    const withCors = resourcesOf(stateful, 'AWS::S3::Bucket').filter(([, bucket]) => bucket.Properties?.CorsConfiguration !== undefined);
    expect(withCors).toHaveLength(1);
    expect(
      (withCors[0]?.[1].Properties?.CorsConfiguration as { CorsRules: { AllowedOrigins: unknown }[] }).CorsRules.map(
        (rule) => rule.AllowedOrigins,
      ),
    ).toEqual([origins]);
  });

  it('applies the log retention, the log level and the Plus plan with threat protection', () => {
    for (const template of [stateful, stateless]) {
      for (const [id, logGroup] of resourcesOf(template, 'AWS::Logs::LogGroup')) expect(logGroup.Properties?.RetentionInDays, id).toBe(90);
    }
    for (const [id, fn] of functionsByEntry(stateless)) {
      expect((fn[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables.POWERTOOLS_LOG_LEVEL, id).toBe('DEBUG');
    }
    stateful.hasResourceProperties('AWS::Cognito::UserPool', {
      UserPoolTier: 'PLUS',
      UserPoolAddOns: { AdvancedSecurityMode: 'ENFORCED' },
    });
  });

  it('alarms when a 50 GiB node has less than 20% free, and gives new indexes one replica on two nodes', () => {
    stateless.hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'FreeStorageSpace', Threshold: 10_240 });
    const functions = functionsByEntry(stateless);
    for (const entry of [SEARCH_INDEX_SETUP_ENTRY, SEARCH_REINDEX_ENTRY]) {
      expect(
        (functions.get(entry)?.[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables.OPENSEARCH_REPLICAS,
        entry,
      ).toBe('1');
    }
    stateless.hasResourceProperties('Custom::SearchIndexSetup', { TemplateVersion: templateVersion(1) });
  });

  it('still passes cdk-nag, with no acknowledgment left unused', () => {
    const { violations, used } = runNag(app);
    expect(violations).toEqual([]);
    for (const ack of acknowledgmentsOf(app)) expect(used.has(`${ack.path} ${ack.id}`), `${ack.path} ${ack.id}`).toBe(true);
  });
});
