/**
 * cdk-nag AwsSolutionsChecks on both stacks: clean, every acknowledgment with a reason and a finding. Built by
 * lib/stage.ts exactly as bin/app.ts builds them, with bundling skipped (template-helpers.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { acknowledgmentsOf, runNag, type ServiceTemplates, serviceTemplates } from './template-helpers.js';

describe('stacks, nag (bundling skipped)', () => {
  let app: ServiceTemplates['app'];

  beforeAll(() => {
    ({ app } = serviceTemplates());
  });

  it('passes cdk-nag AwsSolutionsChecks; every acknowledgment has a reason and matches a finding', () => {
    const { violations, used } = runNag(app);
    expect(violations).toEqual([]);
    const acknowledgments = acknowledgmentsOf(app);
    expect(acknowledgments.length).toBeGreaterThan(0);
    for (const ack of acknowledgments) {
      expect(ack.reason.length, `${ack.path} ${ack.id}`).toBeGreaterThanOrEqual(60);
      expect(used.has(`${ack.path} ${ack.id}`), `acknowledgment without a finding: ${ack.path} ${ack.id}`).toBe(true);
    }
    const grouped = new Map<string, string[]>();
    for (const ack of acknowledgments)
      grouped.set(`${ack.id}\n      ${ack.reason}`, [
        ...(grouped.get(`${ack.id}\n      ${ack.reason}`) ?? []),
        ack.path.replace(/^DeviceScenarioService-test-/, ''),
      ]);
    console.log(
      `cdk-nag acknowledgments (${acknowledgments.length}):\n${[...grouped].map(([rule, paths]) => `  ${rule}\n      on ${paths.join(', ')}`).join('\n')}`,
    );
  });
});
