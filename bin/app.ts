/**
 * CDK entry (`npx cdk synth`, `npx cdk deploy --all`): the stateful stack (tables, archive bucket, OpenSearch domain,
 * Cognito user pool) and the stateless one (functions, HTTP APIs, alarms) of one stage. Customer parameters come
 * from CDK context (lib/settings.ts; e.g. `-c stage=staging`). Environment-agnostic unless the CLI provides an
 * account and region, so synth needs no credentials. cdk-nag's AWS Solutions checks run on every synth and fail it
 * on any finding that is not acknowledged with a reason (lib/nag.ts).
 */
import { App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { FUNCTIONS } from '../functions/contract/functions.js';
import { AWS_ROUTES } from '../functions/contract/routes.js';
import { POWERTOOLS_SERVICE_NAME } from '../lib/service-function.js';
import { readServiceSettings } from '../lib/settings.js';
import { createStage } from '../lib/stage.js';

const app = new App();
const settings = readServiceSettings(app.node);

const account = process.env.CDK_DEFAULT_ACCOUNT;
const region = process.env.CDK_DEFAULT_REGION;
createStage(
  app,
  settings,
  { routes: AWS_ROUTES, functions: FUNCTIONS },
  { ...(account === undefined ? {} : { account }), ...(region === undefined ? {} : { region }) },
);

Tags.of(app).add('service', POWERTOOLS_SERVICE_NAME);
Tags.of(app).add('stage', settings.stage);
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
