/** What a command's action starts from: its settings, the typed client, the company it acts on. */
import type { Command } from 'commander';
import { createDssClient, type DssClient } from '../client/index.js';
import { companyOf, type GlobalOptions, resolveSettings, type Settings } from './settings.js';

/** One invocation's settings and client. */
export interface Invocation {
  settings: Settings;
  /** The typed client, with the resolved addresses and token. */
  dss: DssClient;
  /** `--json` was given. */
  json: boolean;
  /** The company the command acts on. @throws UsageError when it cannot be told (see companyOf) */
  company(): string;
}

/** Resolves a command's settings (flags, environment, stored login, local defaults) and makes its client. */
export async function invocationOf(command: Command): Promise<Invocation> {
  const settings = await resolveSettings(command.optsWithGlobals<GlobalOptions>());
  const dss = createDssClient({ ...settings, token: settings.token });
  return { settings, dss, json: settings.json, company: () => companyOf(settings) };
}
