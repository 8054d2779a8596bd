/**
 * cfn-lint exceptions on single resources (`npm run lint:cfn`, bin/lint-cfn.ts). cfn-lint skips the rules a resource
 * names in `Metadata.cfn-lint.config.ignore_checks`; every such exception of this app goes through `ignoreCfnLint`, so
 * that each one names its rules, is attached where the resource is made and carries a reason there. docs/aws.md
 * ("cfn-lint") lists them, with the rules the script ignores in every template.
 */
import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/**
 * Makes cfn-lint skip `rules` on every resource of type `resourceType` in `scope` (itself included), keeping the
 * rules the resource already skips.
 * @param reason why the findings do not apply to these resources (at least a sentence).
 * @throws Error when `scope` holds no such resource (an exception that applies to nothing is a stale one), or the
 *   reason is missing.
 */
export function ignoreCfnLint(scope: IConstruct, resourceType: string, rules: readonly string[], reason: string): void {
  if (reason.trim().length < 20) throw new Error(`The cfn-lint exception for ${rules.join(', ')} needs a real reason.`);
  const resources = scope.node
    .findAll()
    .filter((construct): construct is CfnResource => CfnResource.isCfnResource(construct) && construct.cfnResourceType === resourceType);
  if (resources.length === 0)
    throw new Error(`No ${resourceType} under ${scope.node.path} for the cfn-lint exception of ${rules.join(', ')}.`);
  for (const resource of resources) {
    const existing =
      (resource.getMetadata('cfn-lint') as { config?: { ignore_checks?: string[] } } | undefined)?.config?.ignore_checks ?? [];
    resource.addMetadata('cfn-lint', { config: { ignore_checks: [...new Set([...existing, ...rules])].sort() } });
  }
}
