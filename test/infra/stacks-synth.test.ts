/**
 * The one full synthesis: the real `cdk synth` (the CLI, offline, without credentials, real esbuild bundling, cdk-nag
 * as bin/app.ts registers it), checking every function's bundle.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ENV } from '../../functions/contract/environment.js';
import { CONSOLE_ASSET_PATTERN } from '../../functions/contract/routes/console.js';
import { ROUTES } from '../../functions/contract/routes.js';
import { FUNCTION_BUNDLE_LIMIT_BYTES } from '../../lib/bundling.js';
import { functionIdOf, REPO_ROOT } from '../../lib/service-function.js';
import { DEPLOYED_QUEUE_URL, deployedValue, isCdkProvided, LAMBDA_PROVIDED, type Resource, STATELESS_ENTRIES } from './template-helpers.js';

describe('`cdk synth` with esbuild bundling (the CLI, offline, no credentials)', () => {
  const outputRoot = join(REPO_ROOT, 'cdk.out');
  let outdir: string | undefined;

  afterAll(() => {
    if (outdir !== undefined) rmSync(outdir, { recursive: true, force: true });
  });

  it('synthesizes both stacks (and the nested ones) in under 3 minutes, cdk-nag clean, every bundle an index.mjs under 1 MiB that exports handler', {
    timeout: 240_000,
  }, () => {
    mkdirSync(outputRoot, { recursive: true });
    // Inside the repository so that the runtime-provided @aws-sdk/* modules resolve when the bundles are loaded.
    outdir = mkdtempSync(join(outputRoot, 'infra-test-'));
    const environment: NodeJS.ProcessEnv = { ...process.env, AWS_EC2_METADATA_DISABLED: 'true', CDK_DISABLE_VERSION_CHECK: '1' };
    for (const name of Object.keys(environment))
      if (/^AWS_(ACCESS_KEY_ID|SECRET_ACCESS_KEY|SESSION_TOKEN|PROFILE)$/.test(name)) delete environment[name];
    const started = Date.now();
    const synth = spawnSync(join(REPO_ROOT, 'node_modules', '.bin', 'cdk'), ['synth', '--quiet', '--no-notices', '--output', outdir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: environment,
      timeout: 200_000,
    });
    const seconds = (Date.now() - started) / 1000;
    expect(synth.status, `${synth.stdout}\n${synth.stderr}`).toBe(0);
    expect(seconds).toBeLessThan(180);

    const bundles: { id: string; file: string; bytes: number }[] = [];
    const packageFileChecks: { id: string; directory: string }[] = [];
    // Every variable a function of the stacks is given, with a value it plausibly takes once deployed (deployedValue):
    // functions that read their configuration at cold start fail to load without it, or with one the schema refuses.
    const configuration: Record<string, string> = {};
    // Both stacks and the stateless stack's nested stacks (`<id>.nested.template.json`), where the route functions live.
    const templates = readdirSync(outdir).filter((file) => file.endsWith('.template.json'));
    expect(templates).toEqual(
      expect.arrayContaining(['DeviceScenarioService-dev-Stateful.template.json', 'DeviceScenarioService-dev-Stateless.template.json']),
    );
    for (const file of templates) {
      const template = JSON.parse(readFileSync(join(outdir, file), 'utf8')) as {
        Resources: Record<string, Resource>;
      };
      for (const [id, resource] of Object.entries(template.Resources)) {
        if (resource.Type !== 'AWS::Lambda::Function' || isCdkProvided(id)) continue;
        const assetPath = resource.Metadata?.['aws:asset:path'];
        expect(assetPath, id).toEqual(expect.any(String));
        const file = join(outdir, assetPath as string, 'index.mjs');
        expect(existsSync(file), file).toBe(true);
        const variables = (resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
        for (const [name, value] of Object.entries(variables))
          configuration[name] = name === ENV.rolloutQueueUrl ? DEPLOYED_QUEUE_URL : deployedValue(value);
        bundles.push({ id, file, bytes: statSync(file).size });
        packageFileChecks.push({ id, directory: join(outdir, assetPath as string) });
      }
    }
    console.log(
      `cdk synth took ${seconds.toFixed(1)} s. Bundle sizes (index.mjs):\n` +
        bundles.map((bundle) => `  ${bundle.id.padEnd(48)} ${String(bundle.bytes).padStart(9)} B`).join('\n'),
    );
    expect(bundles).toHaveLength(STATELESS_ENTRIES.length + 1);
    // zod (~450 KB minified: every route validates its input with its definition's schemas), the OpenSearch client of
    // the search functions (~250 KB) and the X-Ray SDK of Powertools Tracer (~80 KB) are most of the largest bundle.
    for (const bundle of bundles) expect(bundle.bytes, bundle.id).toBeLessThanOrEqual(FUNCTION_BUNDLE_LIMIT_BYTES);

    // The package files a route's handler reads at run time (its access's packageFiles, e.g. Redoc's script for the
    // API reference page) are in that function's bundle, at the path Node's resolution finds them from index.mjs.
    const withPackageFiles = ROUTES.filter((route) => route.access?.packageFiles !== undefined);
    expect(withPackageFiles.map((route) => route.id)).toEqual(['ApiReferenceScript']);
    for (const route of withPackageFiles) {
      const bundle = packageFileChecks.find(({ id }) => id.startsWith(functionIdOf(route.entry)));
      expect(bundle, route.id).toBeDefined();
      for (const file of route.access?.packageFiles ?? []) {
        const copied = join(bundle?.directory ?? '', 'node_modules', file);
        expect(existsSync(copied), copied).toBe(true);
        expect(readFileSync(copied).equals(readFileSync(join(REPO_ROOT, 'node_modules', file))), copied).toBe(true);
      }
    }

    // The functions serving the operator console carry its build (console/build.ts) under console/, where
    // functions/platform/console.ts reads it on Lambda: a manifest naming a script and a style sheet that are there.
    const withConsole = ROUTES.filter((route) => route.access?.consoleAssets === true);
    expect(withConsole.map((route) => route.id).sort()).toEqual(['ConsoleAsset', 'ConsolePage']);
    for (const route of withConsole) {
      const bundle = packageFileChecks.find(({ id }) => id.startsWith(functionIdOf(route.entry)));
      expect(bundle, route.id).toBeDefined();
      const directory = join(bundle?.directory ?? '', 'console');
      const manifest = JSON.parse(readFileSync(join(directory, 'manifest.json'), 'utf8')) as { script: string; style: string };
      expect(manifest.script, route.id).toMatch(CONSOLE_ASSET_PATTERN);
      expect(manifest.style, route.id).toMatch(CONSOLE_ASSET_PATTERN);
      for (const file of [manifest.script, manifest.style])
        expect(statSync(join(directory, file)).size, `${route.id}: ${file}`).toBeGreaterThan(0);
    }

    // The ESM bundles load in plain Node (the createRequire banner, externals) and export a handler.
    const script = `for (const file of process.argv.slice(1)) { const m = await import(file); if (typeof m.handler !== 'function') throw new Error(file + ': no handler'); }`;
    const loaded = spawnSync(process.execPath, ['--input-type=module', '-e', script, ...bundles.map((bundle) => bundle.file)], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      env: { ...process.env, ...configuration, ...LAMBDA_PROVIDED, POWERTOOLS_LOG_LEVEL: 'SILENT' },
    });
    expect(loaded.status, loaded.stderr.slice(-2_000)).toBe(0);
  });
});
