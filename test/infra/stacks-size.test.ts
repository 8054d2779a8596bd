/**
 * Room to grow: CloudFormation refuses a template of more than 500 resources, 200 parameters or 200 outputs
 * (`TooManyResourcesInStack` and its kin, at deployment or in `cdk synth`'s validation), nested stack or not. Each
 * stack of a stage stays under a budget below those limits, so that the next routes and functions fail here, with
 * the stack named, long before a deployment does. Also where things live: the functions a route runs in the nested
 * stack of its API (lib/constructs/http-apis.ts), the routes themselves, the functions no route runs and the alarms
 * in the stateless stack. Built by lib/stage.ts exactly as bin/app.ts builds it, with bundling skipped.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, NestedStack, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearerAuthorizer } from '../../functions/contract/functions.js';
import type { ApiName } from '../../functions/contract/route.js';
import { servingOf } from '../../lib/constructs/function-access.js';
import type { ServiceStage } from '../../lib/stage.js';
import { AWS_ROUTES, functionsByEntry, isCdkProvided, nestedStacksOf, quickStage, resourcesOf, SERVICE } from './template-helpers.js';

/** Resources per stack: 50 under CloudFormation's 500, about seven new route functions' worth in the busiest stack. */
const RESOURCE_BUDGET = 450;
/** Parameters and outputs per stack: 20 under CloudFormation's 200 each (nested stacks pass references through them). */
const PARAMETER_BUDGET = 180;
const OUTPUT_BUDGET = 180;

/** Resources, parameters and outputs of every stack of `app`, nested ones included, by construct path. */
function sizesOf(app: App): { stack: string; resources: number; parameters: number; outputs: number }[] {
  return app.node
    .findAll()
    .filter((construct): construct is Stack => Stack.isStack(construct))
    .map((stack) => {
      const template = Template.fromStack(stack).toJSON() as Record<'Resources' | 'Parameters' | 'Outputs', object | undefined>;
      const count = (section: object | undefined) => Object.keys(section ?? {}).length;
      return {
        stack: `${stack.node.path}${NestedStack.isNestedStack(stack) ? ' (nested)' : ''}`,
        resources: count(template.Resources),
        parameters: count(template.Parameters),
        outputs: count(template.Outputs),
      };
    });
}

describe('stacks, size and layout (bundling skipped)', () => {
  let app: App;
  let stage: ServiceStage;

  beforeAll(() => {
    ({ app, stage } = quickStage());
  });

  it(`keeps every stack, nested or not, under ${RESOURCE_BUDGET} resources, ${PARAMETER_BUDGET} parameters and ${OUTPUT_BUDGET} outputs`, () => {
    const sizes = sizesOf(app);
    console.log(
      'Resources, parameters and outputs per stack:\n' +
        sizes
          .map(
            (size) =>
              `  ${size.stack.padEnd(62)} ${String(size.resources).padStart(4)} ${String(size.parameters).padStart(4)} ${String(size.outputs).padStart(4)}`,
          )
          .join('\n'),
    );
    const over = sizes.flatMap(({ stack, resources, parameters, outputs }) => [
      ...(resources > RESOURCE_BUDGET ? [`${stack}: ${resources} resources (budget ${RESOURCE_BUDGET}, CloudFormation's limit 500)`] : []),
      ...(parameters > PARAMETER_BUDGET ? [`${stack}: ${parameters} parameters (budget ${PARAMETER_BUDGET}, limit 200)`] : []),
      ...(outputs > OUTPUT_BUDGET ? [`${stack}: ${outputs} outputs (budget ${OUTPUT_BUDGET}, limit 200)`] : []),
    ]);
    // Over budget: move more into nested stacks (docs/architecture.md, "Adding a route").
    expect(over).toEqual([]);
    expect(sizes.map((size) => size.stack).sort()).toEqual(
      [
        'DeviceScenarioService-test-Stateful',
        'DeviceScenarioService-test-Stateless',
        'DeviceScenarioService-test-Stateless/AuthApiRoutes (nested)',
        'DeviceScenarioService-test-Stateless/MainApiRoutes (nested)',
        'DeviceScenarioService-test-Stateless/UploadApiRoutes (nested)',
      ].sort(),
    );
  });

  it("runs each route's function in its API's nested stack, with its integration and invoke permission; routes, APIs and alarms stay in the stateless stack", () => {
    const nested = new Map(nestedStacksOf(stage.stateless).map((stack) => [stack.node.id, Template.fromStack(stack)]));
    const own = Template.fromStack(stage.stateless);
    const entriesOf = (api: ApiName) =>
      new Set(
        AWS_ROUTES.filter((route) => route.api === api).flatMap((route) =>
          servingOf(route) === 'cognito-jwks' ? [] : [(servingOf(route) as { entry: string }).entry],
        ),
      );
    for (const [api, id] of [
      ['main', 'MainApiRoutes'],
      ['upload', 'UploadApiRoutes'],
      ['auth', 'AuthApiRoutes'],
    ] as const) {
      const template = nested.get(id) as Template;
      // The bearer authorizer's function lives with the main API's route functions (lib/constructs/http-apis.ts).
      const expected = api === 'main' ? [...entriesOf(api), bearerAuthorizer.entry] : [...entriesOf(api)];
      expect([...functionsByEntry(template).keys()].sort(), id).toEqual(expected.sort());
      const functionRoutes = AWS_ROUTES.filter((route) => route.api === api && servingOf(route) !== 'cognito-jwks');
      expect(resourcesOf(template, 'AWS::ApiGatewayV2::Integration'), id).toHaveLength(functionRoutes.length);
      expect(resourcesOf(template, 'AWS::Lambda::Permission'), id).toHaveLength(functionRoutes.length);
      // A stateful role's policy is an inline policy named after its logical id: never the name the stack's own had
      // for it before the function moved here, which the stack's cleanup deletes from the same role on upgrade.
      for (const [policyId, policy] of resourcesOf(template, 'AWS::IAM::Policy')) {
        if (JSON.stringify(policy.Properties?.Roles).includes('Fn::ImportValue'))
          expect(policyId).toMatch(/FunctionStatefulRolePolicy[0-9A-F]{8}$/);
      }
      for (const type of ['AWS::ApiGatewayV2::Route', 'AWS::ApiGatewayV2::Api', 'AWS::CloudWatch::Alarm'])
        expect(resourcesOf(template, type), `${id} ${type}`).toEqual([]);
    }
    // The functions no route runs stay beside their queues, schedules and notifications.
    expect([...functionsByEntry(own).keys()].sort()).toEqual(
      SERVICE.functions
        .filter((definition) => definition.trigger.kind !== 'cognito' && definition.trigger.kind !== 'httpAuthorizer')
        .map((definition) => definition.entry)
        .sort(),
    );
    expect(resourcesOf(own, 'AWS::Lambda::Function').filter(([id]) => !isCdkProvided(id))).toHaveLength(functionsByEntry(own).size);
    expect(resourcesOf(own, 'AWS::ApiGatewayV2::Route')).toHaveLength(AWS_ROUTES.length);
  });

  it('matches the counts docs/aws.md gives, the one place the docs state them', () => {
    const documented = readFileSync(join(import.meta.dirname, '..', '..', 'docs', 'aws.md'), 'utf8')
      .split('\n')
      .flatMap((line) => {
        const row = /^\| `…-(\w+)`(?: \/ `(\w+)`)? \| (\d+) \| (\d+) \| (\d+) \|$/.exec(line);
        if (row === null) return [];
        const [, stack, nested, resources, parameters, outputs] = row;
        const path = `DeviceScenarioService-test-${stack}${nested === undefined ? '' : `/${nested} (nested)`}`;
        return [{ stack: path, resources: Number(resources), parameters: Number(parameters), outputs: Number(outputs) }];
      });
    const byStack = (sizes: { stack: string }[]) => [...sizes].sort((a, b) => a.stack.localeCompare(b.stack));
    // A route or a function more changes the counts: write the printed ones in docs/aws.md's table.
    expect(byStack(documented)).toEqual(byStack(sizesOf(app)));
  });
});
