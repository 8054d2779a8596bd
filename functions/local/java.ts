import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

/** The Java release the local servers need: DynamoDB Local and OpenSearch 2.19 both run on 17 or newer. */
export const MINIMUM_JAVA = 17;

/**
 * The command of a Java tool (`java`, or `javac` to compile), from JAVA_HOME when it is set, else from the PATH,
 * after checking that it runs and is Java MINIMUM_JAVA or newer.
 * @param tool `java` or `javac`
 * @param forWhat what needs it, for the error (`DynamoDB Local`, `The OpenSearch node`)
 * @throws Error in one line naming the Debian package to install (openjdk-17-jre-headless for `java`,
 *   openjdk-17-jdk-headless for `javac`) when the tool is missing, or the version found when it is too old.
 */
export function javaTool(tool: 'java' | 'javac', forWhat: string): string {
  const command = process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', tool) : tool;
  const probe = spawnSync(command, ['-version'], { encoding: 'utf8' });
  // `java -version` prints `openjdk version "17.0.15"`, `javac -version` prints `javac 17.0.15`.
  const version = /(?:version "|javac )(\d+)/.exec(`${probe.stderr}${probe.stdout}`)?.[1];
  const debianPackage = tool === 'java' ? 'openjdk-17-jre-headless' : 'openjdk-17-jdk-headless';
  if (probe.error !== undefined || version === undefined) {
    throw new Error(
      `${forWhat} needs \`${tool}\` from Java ${MINIMUM_JAVA} or newer: install it (\`apt-get install ${debianPackage}\`) or set JAVA_HOME.`,
    );
  }
  if (Number(version) < MINIMUM_JAVA) {
    throw new Error(
      `${forWhat} needs Java ${MINIMUM_JAVA} or newer; found Java ${version} (\`apt-get install ${debianPackage}\`, or set JAVA_HOME).`,
    );
  }
  return command;
}
