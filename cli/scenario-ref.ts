/** `SCENARIO@VERSION`, how CLI arguments name one scenario version (`what.id` and `what.subId`). */
import { SEMVER_PATTERN } from '../functions/core/scenarios/versions.js';
import { IDENTIFIER_PATTERN } from '../functions/core/shared/identifiers.js';
import { UsageError } from './output.js';

/** A scenario version named on the command line. */
export interface ScenarioRef {
  /** The scenario id (`id` of its scenario.json). */
  scenarioId: string;
  /** Its semantic version (`version` of scenario.json). */
  version: string;
}

/**
 * Parses `SCENARIO@VERSION`, e.g. `acme-welcome@1.1.0`. A scenario id never holds `@`, so the text splits at its only
 * `@`; the version may carry SemVer pre-release and build parts (`1.0.0-rc.1+build.5`).
 * @throws UsageError when there is no `@`, the id is not 1 to 128 letters, digits, `.`, `_` or `-`, or the version is
 * not a semantic version
 */
export function parseScenarioRef(text: string): ScenarioRef {
  const at = text.indexOf('@');
  if (at < 0 || at !== text.lastIndexOf('@')) {
    throw new UsageError(`'${text}' is not SCENARIO@VERSION (e.g. acme-welcome@1.1.0).`);
  }
  const scenarioId = text.slice(0, at);
  const version = text.slice(at + 1);
  if (!IDENTIFIER_PATTERN.test(scenarioId)) {
    throw new UsageError(
      `'${text}': the scenario id '${scenarioId}' must be 1 to 128 letters, digits, '.', '_' or '-', starting with a letter or digit.`,
    );
  }
  if (!SEMVER_PATTERN.test(version)) throw new UsageError(`'${text}': '${version}' is not a semantic version such as 1.0.0.`);
  return { scenarioId, version };
}
