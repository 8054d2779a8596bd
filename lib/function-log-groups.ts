/**
 * Log groups with retention for the Lambda functions that aws-cdk-lib adds on its own (the S3 notification handler,
 * the AwsCustomResource function applying the OpenSearch policies, the custom-resource provider framework…). Left
 * alone, those write to `/aws/lambda/<name>`, created by Lambda on first use and never expiring. ServiceFunction and
 * the provider framework already name their log group; every other function gets one here.
 */
import { CfnResource, type IAspect, type IResolvable, Tokenization } from 'aws-cdk-lib';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct, IConstruct } from 'constructs';

/**
 * Aspect: every `AWS::Lambda::Function` without `LoggingConfig.LogGroup` gets a sibling log group (construct id
 * `<function id>LogGroup`, retained like the other log groups) with `retention`, named in its LoggingConfig (a raw
 * CfnResource function is assumed to have none). The functions' roles already allow writing to any log group (CDK
 * gives them the basic execution policy).
 */
export class FunctionLogGroups implements IAspect {
  constructor(private readonly retention: RetentionDays) {}

  visit(node: IConstruct): void {
    if (node instanceof CfnFunction) {
      const config = node.loggingConfig as CfnFunction.LoggingConfigProperty | IResolvable | undefined;
      if (config !== undefined && (Tokenization.isResolvable(config) || config.logGroup !== undefined)) return;
      node.loggingConfig = { ...config, logGroup: this.logGroupBeside(node).logGroupName };
    } else if (node instanceof CfnResource && node.cfnResourceType === 'AWS::Lambda::Function') {
      // A raw CfnResource (the S3 notification handler is one) sets no LoggingConfig: add the property.
      node.addPropertyOverride('LoggingConfig.LogGroup', this.logGroupBeside(node).logGroupName);
    }
  }

  private logGroupBeside(node: CfnResource): LogGroup {
    return new LogGroup(node.node.scope as Construct, `${node.node.id}LogGroup`, { retention: this.retention });
  }
}
