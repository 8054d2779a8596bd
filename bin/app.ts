/**
 * CDK entry (`npx cdk synth`, `npx cdk deploy`): the stateful stack (tables, archive bucket) and the stateless one
 * (functions, HTTP APIs) of one stage. `-c stage=prod` selects the stage; other context keys are documented in
 * lib/stateless-stack.ts. Environment-agnostic unless the CLI provides an account and region, so synth needs no
 * credentials.
 */
import { App, Tags } from 'aws-cdk-lib';
import { POWERTOOLS_SERVICE_NAME } from '../lib/service-function.js';
import { StatefulStack } from '../lib/stateful-stack.js';
import { StatelessStack } from '../lib/stateless-stack.js';

const app = new App();

const stage: unknown = app.node.tryGetContext('stage') ?? 'dev';
if (typeof stage !== 'string' || !/^[a-z][a-z0-9-]{0,19}$/.test(stage)) {
  throw new Error(`CDK context 'stage' must be lowercase letters, digits and dashes (at most 20); got ${JSON.stringify(stage)}.`);
}

const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
const env = { ...(account === undefined ? {} : { account }), ...(region === undefined ? {} : { region }) };

const prefix = `DeviceScenarioService-${stage}`;
const stateful = new StatefulStack(app, `${prefix}-Stateful`, {
  env,
  description: `Device scenario service (${stage}): tables and archive bucket, retained on deletion.`,
});
new StatelessStack(app, `${prefix}-Stateless`, {
  env,
  description: `Device scenario service (${stage}): functions and HTTP APIs.`,
  tables: stateful.tables,
  archiveBucket: stateful.archiveBucket,
});

Tags.of(app).add('service', POWERTOOLS_SERVICE_NAME);
Tags.of(app).add('stage', stage);
