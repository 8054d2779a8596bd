/** The customer parameters (lib/settings.ts): documented defaults, CLI strings and cdk.json values, clear refusals. */
import { App } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, readServiceSettings } from '../../lib/settings.js';

const read = (context: Record<string, unknown>) => readServiceSettings(new App({ context }).node);

describe('readServiceSettings', () => {
  it('takes the documented defaults when nothing is set', () => {
    expect(read({})).toEqual({
      stage: 'dev',
      logLevel: 'INFO',
      logRetention: RetentionDays.ONE_MONTH,
      corsAllowedOrigins: [],
      opensearch: { instanceType: 't3.small.search', instanceCount: 1, volumeGiB: 10 },
      cognitoFeaturePlan: 'ESSENTIALS',
      devices: { heartbeatSeconds: 300, tokenLifetimeSeconds: 900 },
      authThrottle: { rateLimit: 200, burstLimit: 400 },
      webhookAllowedHttpHosts: '',
    });
    expect(read({})).toEqual(DEFAULT_SETTINGS);
  });

  it('reads `-c key=value` strings and cdk.json values alike', () => {
    const fromCli = read({
      stage: 'staging',
      logLevel: 'debug',
      logRetentionDays: '90',
      corsAllowedOrigins: 'https://a.example.com, https://b.example.com',
      opensearchInstanceType: 'm7g.large.search',
      opensearchInstanceCount: '3',
      opensearchVolumeGiB: '100',
      cognitoFeaturePlan: 'plus',
      deviceHeartbeatSeconds: '120',
      deviceTokenLifetimeSeconds: '600',
      authRateLimit: '50',
      authBurstLimit: '80',
      webhookAllowedHttpHosts: 'hooks.internal.example,10.20.0.5',
    });
    const fromJson = read({
      stage: 'staging',
      logLevel: 'DEBUG',
      logRetentionDays: 90,
      corsAllowedOrigins: ['https://a.example.com', 'https://b.example.com'],
      opensearchInstanceType: 'm7g.large.search',
      opensearchInstanceCount: 3,
      opensearchVolumeGiB: 100,
      cognitoFeaturePlan: 'PLUS',
      deviceHeartbeatSeconds: 120,
      deviceTokenLifetimeSeconds: 600,
      authRateLimit: 50,
      authBurstLimit: 80,
      webhookAllowedHttpHosts: 'hooks.internal.example,10.20.0.5',
    });
    expect(fromCli).toEqual(fromJson);
    expect(fromCli).toMatchObject({
      logLevel: 'DEBUG',
      logRetention: RetentionDays.THREE_MONTHS,
      corsAllowedOrigins: ['https://a.example.com', 'https://b.example.com'],
      opensearch: { instanceType: 'm7g.large.search', instanceCount: 3, volumeGiB: 100 },
      cognitoFeaturePlan: 'PLUS',
      devices: { heartbeatSeconds: 120, tokenLifetimeSeconds: 600 },
      authThrottle: { rateLimit: 50, burstLimit: 80 },
      webhookAllowedHttpHosts: 'hooks.internal.example,10.20.0.5',
    });
  });

  it.each([
    [{ stage: 'Prod' }, /stage/],
    [{ stage: 'a'.repeat(21) }, /stage/],
    [{ logLevel: 'LOUD' }, /logLevel/],
    [{ logRetentionDays: '31' }, /logRetentionDays.*one of/],
    [{ corsAllowedOrigins: 'https://app.example.com/' }, /corsAllowedOrigins/],
    [{ corsAllowedOrigins: 'app.example.com' }, /corsAllowedOrigins/],
    [{ opensearchInstanceType: 't3.small' }, /opensearchInstanceType/],
    [{ opensearchInstanceCount: '0' }, /opensearchInstanceCount/],
    [{ opensearchInstanceCount: 'two' }, /opensearchInstanceCount/],
    [{ opensearchVolumeGiB: '5' }, /opensearchVolumeGiB/],
    [{ cognitoFeaturePlan: 'LITE' }, /cognitoFeaturePlan/],
    [{ deviceHeartbeatSeconds: '0' }, /deviceHeartbeatSeconds/],
    // Device tokens live at most 15 minutes (the contract).
    [{ deviceTokenLifetimeSeconds: '901' }, /deviceTokenLifetimeSeconds/],
    // API Gateway's account defaults bound a stage's throttle; 0 would refuse every token request.
    [{ authRateLimit: '0' }, /authRateLimit/],
    [{ authBurstLimit: '5001' }, /authBurstLimit/],
    [{ webhookAllowedHttpHosts: 'a.example,,b.example' }, /webhookAllowedHttpHosts/],
    [{ webhookAllowedHttpHosts: 'a.example b.example' }, /webhookAllowedHttpHosts/],
  ])('refuses %j naming the key', (context, message) => {
    expect(() => read(context)).toThrow(message);
  });
});
