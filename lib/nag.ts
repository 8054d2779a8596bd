/**
 * cdk-nag acknowledgments. cdk-nag 3 runs as a CDK policy-validation plugin (`Validations.of(app).addPlugins(new
 * AwsSolutionsChecks(app))`, bin/app.ts) and fails the synth on any finding, error or warning, that is not
 * acknowledged with `Validations.of(construct).acknowledge({ id, reason })`. Every acknowledgment of this app goes
 * through `acknowledge` below, so each one names the rule (or the single finding) and carries a reason specific to
 * this design; the infrastructure tests list them and check that each has a reason.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges one cdk-nag finding on `scope` and everything under it.
 * @param rule the rule id (`AwsSolutions-OS1`) or one finding of a granular rule (`AwsSolutions-IAM5[Resource::*]`).
 * @param reason why the finding is accepted in this design (at least a sentence).
 */
export function acknowledge(scope: IConstruct, rule: string, reason: string): void {
  if (reason.trim().length < 20) throw new Error(`cdk-nag acknowledgment of ${rule} needs a real reason.`);
  Validations.of(scope).acknowledge({ id: rule, reason });
}

/** The finding id of cdk-nag's wildcard rule for one policy resource, as cdk-nag flattens it (`<Logical.Arn>/*`). */
export function wildcardResourceFinding(resource: string): string {
  return `AwsSolutions-IAM5[Resource::${resource}]`;
}

/** The finding id of cdk-nag's wildcard rule for one policy action (`s3:GetObject*`). */
export function wildcardActionFinding(action: string): string {
  return `AwsSolutions-IAM5[Action::${action}]`;
}

/** The finding id of cdk-nag's AWS-managed-policy rule for one managed policy name (`service-role/…`). */
export function managedPolicyFinding(policyName: string): string {
  return `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/${policyName}]`;
}
