/**
 * The dependency rules (.dependency-cruiser.cjs) run on a small fixture the way `npm run lint:architecture` runs them on
 * the repository: an import cycle between two console components (.tsx files imported by their .js names, one import
 * type-only) is reported, as is a core module importing an adapter, while a console component importing another one
 * without a cycle resolves and passes.
 */
import { spawnSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

const FIXTURE: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', jsx: 'react-jsx' } }),
  // A cycle of two components, one side type-only: it still fixes an initialisation order for the bundler and the reader.
  'console/src/panel.tsx':
    "import { Row } from './row.js';\nexport type PanelProps = { rows: string[] };\nexport const Panel = () => <Row />;\n",
  'console/src/row.tsx': "import type { PanelProps } from './panel.js';\nexport const Row = (_: Partial<PanelProps>) => <tr />;\n",
  // No cycle: a component using another one.
  'console/src/page.tsx': "import { Badge } from './badge.js';\nexport const Page = () => <Badge />;\n",
  'console/src/badge.tsx': 'export const Badge = () => <span />;\n',
  // The domain importing an adapter.
  'functions/core/area/use-case.ts': "import { store } from '../../adapters/aws/store.js';\nexport const useCase = () => store;\n",
  'functions/adapters/aws/store.ts': 'export const store = 1;\n',
};

interface Cruise {
  modules: { source: string; dependencies: { resolved: string; couldNotResolve: boolean }[] }[];
  summary: { violations: { from: string; to: string; rule: { name: string } }[] };
}

let fixture: string;
let cruise: Cruise;

beforeAll(async () => {
  fixture = await mkdtemp(join(tmpdir(), 'dss-dependency-rules-'));
  for (const [path, text] of Object.entries(FIXTURE)) {
    await mkdir(dirname(join(fixture, path)), { recursive: true });
    await writeFile(join(fixture, path), text);
  }
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs'),
      'console',
      'functions',
      '--config',
      join(root, '.dependency-cruiser.cjs'),
      '--output-type',
      'json',
    ],
    { cwd: fixture, encoding: 'utf8' },
  );
  cruise = JSON.parse(run.stdout) as Cruise;
}, 60_000);

afterAll(async () => {
  await rm(fixture, { recursive: true, force: true });
});

describe('the dependency rules', () => {
  it('resolve a .tsx module imported by its .js name', () => {
    const page = cruise.modules.find((module) => module.source === 'console/src/page.tsx');
    expect(page?.dependencies.map(({ resolved, couldNotResolve }) => ({ resolved, couldNotResolve }))).toEqual([
      { resolved: 'console/src/badge.tsx', couldNotResolve: false },
    ]);
  });

  it('report an import cycle between .tsx modules, a type-only import included, and nothing about the modules without one', () => {
    const cycles = cruise.summary.violations.filter((violation) => violation.rule.name === 'no-cycles');
    // One report per cycle, naming the import that closes it.
    expect(cycles.map(({ from, to }) => [from, to].sort())).toEqual([['console/src/panel.tsx', 'console/src/row.tsx']]);
  });

  it('report a core module importing an adapter', () => {
    const plain = cruise.summary.violations.filter((violation) => violation.rule.name === 'core-is-plain');
    expect(plain.map(({ from, to }) => `${from} → ${to}`)).toEqual(['functions/core/area/use-case.ts → functions/adapters/aws/store.ts']);
  });
});
