/**
 * `npm run lint:cfn`: synthesizes the CDK app (the real `cdk synth`, offline, cdk-nag validation included) into a
 * temporary folder and lints every `*.template.json` of the cloud assembly (nested stacks and nested assemblies too)
 * with cfn-lint and its serverless rules, both pinned in bin/python-tools.txt. Exits non-zero on any error or warning
 * that is not one of the exceptions docs/aws.md ("cfn-lint") lists: IGNORED_CHECKS below for every template, and
 * `Metadata.cfn-lint.config.ignore_checks` on single resources (lib/cfn-lint.ts). Informational findings are printed
 * but do not fail the run. `AWS_REGION` chooses the region synthesized and linted for (default us-east-1).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Rules skipped in every template, each with why it does not apply (the same table is in docs/aws.md). */
export const IGNORED_CHECKS: Readonly<Record<string, string>> = {
  W3005:
    "aws-cdk-lib makes every function depend on its role and the role's policy; the role half is redundant with the " +
    'Fn::GetAtt of the role, and harmless (CloudFormation orders the resources the same).',
  WS1004:
    'Every function logs to a log group of its own with the stage retention, named in its LoggingConfig.LogGroup ' +
    '(ServiceFunction, lib/function-log-groups.ts; asserted by test/infra); the rule knows only groups named /aws/lambda/<name>.',
};

/** The default region when `AWS_REGION` is unset: the templates are the same in every region but for region-specific checks. */
const DEFAULT_REGION = 'us-east-1';

/**
 * Runs `cdk synth` into `outdir` for `region` without AWS credentials or a profile, so that the synthesis is offline
 * and does not depend on who runs it.
 * @throws Error when the synthesis fails (its output is printed).
 */
export function synthesize(outdir: string, region: string): void {
  const environment: NodeJS.ProcessEnv = {
    ...process.env,
    // The CDK CLI derives the stacks' region from AWS_REGION; CDK_DEFAULT_REGION it would overwrite (docs/aws.md).
    AWS_REGION: region,
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: '1',
  };
  for (const name of Object.keys(environment))
    if (/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE)$/.test(name)) delete environment[name];
  const synth = spawnSync(
    join(ROOT, 'node_modules', '.bin', 'cdk'),
    ['synth', '--quiet', '--no-notices', '--validation', '--output', outdir],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env: environment,
    },
  );
  if (synth.error !== undefined) throw synth.error;
  if (synth.status !== 0) throw new Error(`cdk synth failed (exit ${synth.status}):\n${synth.stdout}\n${synth.stderr}`);
}

/**
 * Every `*.template.json` under the cloud assembly `directory`: the stacks, their nested stacks and those of nested
 * assemblies (`assembly-*`, one per CDK Stage). Asset folders are skipped: what they hold is deployed as code, not as
 * a template.
 */
export function templatesOf(directory: string): string[] {
  const templates: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory() && !entry.name.startsWith('asset.')) templates.push(...templatesOf(path));
    else if (entry.isFile() && entry.name.endsWith('.template.json')) templates.push(path);
  }
  return templates.sort();
}

/**
 * Lints `templates` with cfn-lint and the serverless rules for `region`, its report on this process's output.
 * @returns cfn-lint's exit status: non-zero for any error or warning not ignored; informational findings are shown only.
 */
export function lintTemplates(templates: readonly string[], region: string): number {
  const lint = spawnSync(
    join(ROOT, 'bin', 'python-tools.sh'),
    [
      'cfn-lint',
      '--regions',
      region,
      '--append-rules',
      'cfn_lint_serverless.rules',
      '--include-checks',
      'I',
      '--ignore-checks',
      ...Object.keys(IGNORED_CHECKS),
      '--non-zero-exit-code',
      'warning',
      '--',
      ...templates,
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
  if (lint.error !== undefined) throw lint.error;
  return lint.status ?? 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const region = process.env.AWS_REGION || DEFAULT_REGION;
  const outdir = mkdtempSync(join(tmpdir(), 'lint-cfn-'));
  const started = Date.now();
  try {
    synthesize(outdir, region);
    const templates = templatesOf(outdir);
    if (templates.length === 0) throw new Error(`cdk synth wrote no template to ${outdir}.`);
    const synthesized = Date.now();
    const status = lintTemplates(templates, region);
    const seconds = (at: number) => ((at - started) / 1000).toFixed(1);
    const names = templates.map((template) => relative(outdir, template)).join(', ');
    process.stdout.write(
      `cfn-lint ${status === 0 ? 'passed' : 'failed'} on ${templates.length} templates for ${region} (${names}); ` +
        `synth ${seconds(synthesized)} s, total ${seconds(Date.now())} s.\n`,
    );
    process.exitCode = status;
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
