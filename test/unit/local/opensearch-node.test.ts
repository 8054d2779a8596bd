/**
 * What a machine without the node's prerequisites is told (functions/local/java.ts, opensearch-node.ts): one line
 * naming the Debian package to install, before anything is downloaded or started.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { javaTool } from '../../../functions/local/java.js';
import { prepareOpenSearch } from '../../../functions/local/opensearch-node.js';

let folder: string;

beforeEach(async () => {
  folder = await mkdtemp(join(tmpdir(), 'dss-prerequisites-'));
});

afterEach(async () => {
  vi.unstubAllEnvs();
  await rm(folder, { recursive: true, force: true });
});

describe('the OpenSearch node without its prerequisites', () => {
  it('names openjdk-17-jre-headless when there is no java, and openjdk-17-jdk-headless when there is no javac', () => {
    vi.stubEnv('JAVA_HOME', folder);
    for (const [tool, debianPackage] of [
      ['java', 'openjdk-17-jre-headless'],
      ['javac', 'openjdk-17-jdk-headless'],
    ] as const) {
      const error = (() => {
        try {
          javaTool(tool, 'The OpenSearch node');
        } catch (thrown) {
          return thrown as Error;
        }
        throw new Error(`${tool} was found in an empty JAVA_HOME`);
      })();
      expect(error.message).toContain(`apt-get install ${debianPackage}`);
      expect(error.message).not.toContain('\n');
    }
  });

  it('names maven when mvn is missing and nothing is cached yet', async () => {
    // A cache of its own: nothing prepared, so Maven is needed.
    vi.stubEnv('XDG_CACHE_HOME', folder);
    vi.stubEnv('MAVEN_COMMAND', join(folder, 'no-such-mvn'));
    const error = await prepareOpenSearch().then(
      () => new Error('prepared without Maven'),
      (thrown: unknown) => thrown as Error,
    );
    expect(error.message).toBe('The OpenSearch node is fetched by Maven: install it (`apt-get install maven`) or put `mvn` on the PATH.');
  });
});
