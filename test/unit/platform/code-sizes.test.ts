/**
 * Sizes a reader can hold (docs/architecture.md, "Sizes"): no production function body over 60 lines and no
 * production file over 500 lines, but the exceptions that section names with a reason. Measured with the
 * TypeScript parser, so that a function is what the language says it is (declarations, methods, arrows, function
 * expressions and constructors, nested ones counted on their own).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
/** Lines of a function's body, from its opening to its closing brace. */
const FUNCTION_LINES = 60;
/** Lines of a file. */
const FILE_LINES = 500;
/** The production code: everything that ships or runs the service, the CLI, the console and the simulator. */
const PRODUCTION = ['functions', 'lib', 'cli', 'client', 'console/src', 'simulator', 'bin'];
/** Written by `npm run generate`, not by a person. */
const GENERATED = new Set(['client/api-types.ts', 'client/limits.ts']);

/** Every production TypeScript file, relative to the repository, from git's own list (untracked files included). */
function productionFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', ...PRODUCTION], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  return listed
    .split('\n')
    .filter((path) => /\.tsx?$/.test(path) && !path.endsWith('.d.ts') && !GENERATED.has(path))
    .filter((path) => {
      try {
        readFileSync(join(ROOT, path));
        return true;
      } catch {
        return false;
      }
    });
}

/** The exceptions of docs/architecture.md's "Sizes" table: `path` for a file, `path:name` for a function. */
function exceptions(): Set<string> {
  const map = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
  const section = map.slice(map.indexOf('## Sizes'), map.indexOf('\n## ', map.indexOf('## Sizes') + 1));
  return new Set([...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] as string));
}

/** The name a reader would look for: the declaration's, or the variable's, property's or method's it is assigned to. */
function nameOf(node: ts.Node): string {
  const named = (node as { name?: ts.Node }).name;
  if (named !== undefined) return named.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) return parent.name.getText();
  return '(anonymous)';
}

/** `path:name (N lines)` of every function of `path` whose body is over FUNCTION_LINES lines. */
function longFunctions(path: string, text: string): { key: string; lines: number }[] {
  const source = ts.createSourceFile(
    path,
    text,
    ts.ScriptTarget.Latest,
    true,
    path.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS,
  );
  const found: { key: string; lines: number }[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined && ts.isBlock(node.body as ts.Node)) {
      const body = node.body as ts.Block;
      const lines =
        source.getLineAndCharacterOfPosition(body.getEnd()).line - source.getLineAndCharacterOfPosition(body.getStart()).line + 1;
      if (lines > FUNCTION_LINES) found.push({ key: `${path}:${nameOf(node)}`, lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('sizes of the production code', () => {
  const allowed = exceptions();
  const files = productionFiles().map((path) => ({ path, text: readFileSync(join(ROOT, path), 'utf8') }));

  it('reads the code and the exceptions', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files.some((file) => file.path.endsWith('.tsx'))).toBe(true);
  });

  it(`has no function body over ${FUNCTION_LINES} lines but the named exceptions`, () => {
    const over = files
      .flatMap((file) => longFunctions(file.path, file.text))
      .filter(({ key }) => !allowed.has(key))
      .map(({ key, lines }) => `${key} (${lines} lines)`);
    // Split it by responsibility, or name it with its reason in docs/architecture.md, "Sizes".
    expect(over).toEqual([]);
  });

  it(`has no file over ${FILE_LINES} lines but the named exceptions`, () => {
    const over = files
      .map((file) => ({ path: file.path, lines: file.text.split('\n').length }))
      .filter(({ path, lines }) => lines > FILE_LINES && !allowed.has(path))
      .map(({ path, lines }) => `${path} (${lines} lines)`);
    // Split it by responsibility, or name it with its reason in docs/architecture.md, "Sizes".
    expect(over).toEqual([]);
  });

  it('names no exception that is no longer one', () => {
    const measured = new Set(
      files.flatMap((file) => [
        ...(file.text.split('\n').length > FILE_LINES ? [file.path] : []),
        ...longFunctions(file.path, file.text).map(({ key }) => key),
      ]),
    );
    expect([...allowed].filter((key) => !measured.has(key))).toEqual([]);
  });
});
