/**
 * `dss`, the command-line client of the service (docs/contract.md, "Command-line client"): every command calls the
 * typed client (client/index.ts) and prints a table, or JSON with `--json`. Exit codes: 0 success, 1 a failed request
 * or failed items, 2 bad usage.
 */
import { Command, CommanderError } from 'commander';
import { registerAdminCommands } from './commands/admin.js';
import { registerAlertCommands } from './commands/alerts.js';
import { registerDeploymentCommands } from './commands/deployments.js';
import { registerCommandCommands } from './commands/device-commands.js';
import { registerDeviceCommands } from './commands/devices.js';
import { registerRolloutCommands } from './commands/rollouts.js';
import { registerScenarioCommands } from './commands/scenarios.js';
import { registerSearchCommands } from './commands/search.js';
import { registerSessionCommands } from './commands/session.js';
import { registerWebhookCommands } from './commands/webhooks.js';
import { EXIT_USAGE, reportError } from './output.js';

/** Builds the program with every command (exported for tests of parsing and help). */
export function dssProgram(): Command {
  const program = new Command('dss')
    .description('Command-line client of the device scenario deployment and search service')
    .option('--base-url <url>', 'main API address {base_url} (or DSS_BASE_URL)')
    .option('--upload-url <url>', 'upload address {scenario_upload_url} (or DSS_UPLOAD_URL)')
    .option('--auth-url <url>', 'authentication address {auth_url} (or DSS_AUTH_URL)')
    .option('--token <jwt>', 'access token to use instead of the stored login (or DSS_TOKEN)')
    .option('--company <id>', "company to act on (or DSS_COMPANY); default: the token's only company")
    .option('--json', 'print machine-readable JSON on stdout')
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  registerSessionCommands(program);
  registerScenarioCommands(program);
  registerDeviceCommands(program);
  registerDeploymentCommands(program);
  registerRolloutCommands(program);
  registerCommandCommands(program);
  registerSearchCommands(program);
  registerWebhookCommands(program);
  registerAlertCommands(program);
  registerAdminCommands(program);
  return program;
}

/** Runs the CLI on `argv` (process.argv shape) and resolves to the exit code. */
export async function runDss(argv: readonly string[]): Promise<number> {
  const program = dssProgram();
  try {
    await program.parseAsync(argv as string[]);
    return process.exitCode === undefined ? 0 : Number(process.exitCode);
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end with exit code 0; every other parse error is bad usage.
      return error.exitCode === 0 ? 0 : EXIT_USAGE;
    }
    return reportError(error);
  }
}
