/**
 * What the README must keep saying, because an operator acts on it and no other test would notice it gone: where
 * DynamoDB Local listens, how the region of a deployment is chosen and how to deploy from a script, the account
 * limit the shared CloudWatch Logs resource policy exists for, and every environment variable the service reads.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KNOWN_VARIABLES, readEnvironment } from '../../functions/contract/environment.js';

const readme = readFileSync(join(import.meta.dirname, '../../README.md'), 'utf8');

describe('README', () => {
  it('says plainly that DynamoDB Local listens on all interfaces while the runtime runs', () => {
    expect(readme).toMatch(/\*\*DynamoDB Local listens on all interfaces of the machine while it runs\.\*\*/);
  });

  it('says how the region is chosen (the CLI overwrites CDK_DEFAULT_REGION) and shows a scripted deploy', () => {
    expect(readme).toMatch(/\*\*The region\*\* is `AWS_REGION` if set, else the region of the profile/);
    expect(readme).toMatch(/npx cdk deploy --all --require-approval never/);
  });

  it('names the per-region limit of CloudWatch Logs resource policies the stages share one policy for', () => {
    expect(readme).toMatch(/CloudWatch Logs resource policy, and an account has at\s+most 10/);
  });

  it('names every environment variable the schema declares in its Configuration section, and quotes a real error', () => {
    const section = readme.slice(
      readme.indexOf('\n## Configuration\n'),
      readme.indexOf('\n## ', readme.indexOf('\n## Configuration\n') + 1),
    );
    expect(section.length).toBeGreaterThan(100);
    expect([...KNOWN_VARIABLES].filter((name) => !section.includes(`\`${name}\``))).toEqual([]);
    let message = '';
    try {
      readEnvironment('uploads', { UPLOAD_SLOT_TTL_SECONDS: '0' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/UPLOAD_SLOT_TTL_SECONDS/);
    expect(section).toContain(`\`${message}\``);
  });
});
