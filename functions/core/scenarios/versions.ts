/**
 * Identifier and semantic-version rules, free of any schema library so that modules needing only these (the search
 * document builder in the indexer bundle) do not pull zod in.
 */

/** Semantic Versioning 2.0.0 (semver.org's official regular expression). */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;

/**
 * Compares two semantic versions by SemVer 2.0.0 precedence (build metadata ignored).
 * @returns a negative number, 0 or a positive number. Strings that are not semantic versions sort first.
 */
export function compareSemanticVersions(left: string, right: string): number {
  const parse = (value: string) => SEMVER_PATTERN.exec(value);
  const a = parse(left);
  const b = parse(right);
  if (a === null || b === null) return (a === null ? 0 : 1) - (b === null ? 0 : 1);
  for (let index = 1; index <= 3; index += 1) {
    const difference = Number(a[index]) - Number(b[index]);
    if (difference !== 0) return difference;
  }
  const preA = a[4];
  const preB = b[4];
  if (preA === undefined || preB === undefined) return (preA === undefined ? 1 : 0) - (preB === undefined ? 1 : 0);
  const partsA = preA.split('.');
  const partsB = preB.split('.');
  for (let index = 0; index < Math.max(partsA.length, partsB.length); index += 1) {
    const x = partsA[index];
    const y = partsB[index];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    const numericX = /^\d+$/.test(x);
    const numericY = /^\d+$/.test(y);
    if (numericX && numericY && Number(x) !== Number(y)) return Number(x) - Number(y);
    if (numericX !== numericY) return numericX ? -1 : 1;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The highest of some semantic versions (SemVer precedence); undefined for an empty list. */
export function highestVersion(versions: readonly string[]): string | undefined {
  return [...versions].sort(compareSemanticVersions).at(-1);
}
