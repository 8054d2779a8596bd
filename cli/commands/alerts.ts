/**
 * `dss alerts rules create|list|get|delete` and `dss alerts list`: alert rules (a device search query and a
 * condition) and the alerts they raise and resolve (docs/alerts.md).
 */
import { type Command, InvalidArgumentError } from 'commander';
import { type components, expectOk } from '../../client/index.js';
import { MAX_ALERT_MINUTES, MIN_ALERT_MINUTES } from '../../client/limits.js';
import { integerArgument, positiveInteger } from '../arguments.js';
import { invocationOf } from '../context.js';
import { printJson, printRecord, printTable, say, UsageError } from '../output.js';
import { pageQuery, printListing, readPages } from '../paging.js';

type AlertRule = components['schemas']['AlertRule'];
type AlertCondition = components['schemas']['AlertCondition'];
type SubDeviceState = Extract<AlertCondition, { type: 'SUBDEVICE_STATE_FOR' }>['states'][number];

const minutesArgument = integerArgument(MIN_ALERT_MINUTES, MAX_ALERT_MINUTES);

/** Adds `dss alerts` and its subcommands. */
export function registerAlertCommands(program: Command): void {
  const alerts = program
    .command('alerts')
    .description('Alert rules on the fleet (a kiosk offline, a printer DOWN, a battery low) and the alerts they raise');
  const rules = alerts.command('rules').description('Alert rules: the devices a search query selects, and a condition on them');
  registerRuleCreate(rules);
  registerRuleList(rules);
  registerRuleGet(rules);
  registerRuleDelete(rules);
  registerAlertList(alerts);
}

interface ConditionOptions {
  disconnectedFor?: number;
  subdeviceState?: string;
  for?: number;
  batteryBelow?: number;
}

/**
 * The condition the options name: exactly one of --disconnected-for, --subdevice-state (with --for) and
 * --battery-below. The states are not checked here: the service refuses unknown ones, naming the known ones.
 * @throws UsageError naming what is missing or given together
 */
export function conditionOf(options: ConditionOptions): AlertCondition {
  const given = [options.disconnectedFor, options.subdeviceState, options.batteryBelow].filter((value) => value !== undefined);
  if (given.length !== 1) {
    throw new UsageError('Give one condition: --disconnected-for MIN, --subdevice-state STATE[,STATE] --for MIN, or --battery-below PCT.');
  }
  if (options.subdeviceState === undefined && options.for !== undefined) {
    throw new UsageError('--for goes with --subdevice-state (--disconnected-for takes its minutes itself).');
  }
  if (options.disconnectedFor !== undefined) return { type: 'DISCONNECTED_FOR', minutes: options.disconnectedFor };
  if (options.batteryBelow !== undefined) return { type: 'BATTERY_BELOW', percent: options.batteryBelow };
  if (options.for === undefined) throw new UsageError('--subdevice-state needs --for MIN: how long a state must hold.');
  const states = (options.subdeviceState as string)
    .split(',')
    .map((state) => state.trim().toUpperCase())
    .filter((state) => state !== '');
  return { type: 'SUBDEVICE_STATE_FOR', minutes: options.for, states: [...new Set(states)] as SubDeviceState[] };
}

/** `dss alerts rules create`. */
function registerRuleCreate(group: Command): void {
  group
    .command('create')
    .description('Create an alert rule: the devices a search query selects, and one condition')
    .requiredOption('--name <name>', 'a name for people')
    .option('--query <query>', "a device search's query string, e.g. health.mode=SERVER (default: every device of the company)", '')
    .option('--disconnected-for <minutes>', 'condition: the device DISCONNECTED for more than this many minutes', minutesArgument)
    .option('--subdevice-state <states>', 'condition: a sub-device in one of these health states (comma-separated, e.g. DOWN,WARNING)…')
    .option('--for <minutes>', '…for more than this many minutes', minutesArgument)
    .option('--battery-below <percent>', "condition: a hub's or sub-device's battery below this percent", positiveInteger)
    .addHelpText(
      'after',
      `\nExamples:\n  dss alerts rules create --name "Android kiosks offline" --query health.mode=EMBEDDED_PLATFORM_ANDROID --disconnected-for 15\n  dss alerts rules create --name "Printer down" --query health.hubs.devices.capability.type=PRINTER --subdevice-state DOWN --for 5\n  dss alerts rules create --name "Battery low" --battery-below 20\n\nMinutes: ${MIN_ALERT_MINUTES} to ${MAX_ALERT_MINUTES}. An alert is raised once per rule and device when the condition holds, and resolved when it stops holding.`,
    )
    .action(async (options: ConditionOptions & { name: string; query: string }, command: Command) => {
      const condition = conditionOf(options);
      const { dss, json, company } = await invocationOf(command);
      const created = expectOk(
        await dss.main.POST('/companies/{companyId}/alert-rules', {
          params: { path: { companyId: company() } },
          body: { name: options.name, query: options.query, condition },
        }),
      );
      if (json) printJson(created);
      else {
        say(`Alert rule ${created.id} created.`);
        printRecord(ruleRecord(created));
      }
    });
}

/** `dss alerts rules list`: every rule of the company (at most 100), oldest first. */
function registerRuleList(group: Command): void {
  group
    .command('list')
    .description("List the company's alert rules, oldest first")
    .addHelpText('after', '\nExamples:\n  dss alerts rules list\n  dss alerts rules list --json')
    .action(async (_options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const listing = expectOk(await dss.main.GET('/companies/{companyId}/alert-rules', { params: { path: { companyId: company() } } }));
      if (json) {
        printJson(listing);
        return;
      }
      printTable(
        listing.items,
        [
          { head: 'ID', value: (rule) => rule.id },
          { head: 'NAME', value: (rule) => rule.name },
          { head: 'QUERY', value: (rule) => rule.query },
          { head: 'CONDITION', value: (rule) => conditionText(rule.condition) },
          { head: 'BY', value: (rule) => rule.by },
          { head: 'UPDATED', value: (rule) => rule.updated },
        ],
        'No alert rules.',
      );
    });
}

/** `dss alerts rules get`: one rule. */
function registerRuleGet(group: Command): void {
  group
    .command('get')
    .description('Show an alert rule')
    .argument('<ruleId>', 'rule id')
    .action(async (ruleId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const rule = expectOk(
        await dss.main.GET('/companies/{companyId}/alert-rules/{ruleId}', { params: { path: { companyId: company(), ruleId } } }),
      );
      if (json) printJson(rule);
      else printRecord(ruleRecord(rule));
    });
}

/** `dss alerts rules delete`: its open alerts are resolved. */
function registerRuleDelete(group: Command): void {
  group
    .command('delete')
    .description('Delete an alert rule: its open alerts are resolved')
    .argument('<ruleId>', 'rule id')
    .addHelpText('after', '\nExample:\n  dss alerts rules delete 01JP9X2K4M6P8R0T2W4Y6A8C0E')
    .action(async (ruleId: string, _options: unknown, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      expectOk(
        await dss.main.DELETE('/companies/{companyId}/alert-rules/{ruleId}', { params: { path: { companyId: company(), ruleId } } }),
      );
      if (json) printJson({ id: ruleId, deleted: true });
      else say(`Alert rule ${ruleId} deleted; its open alerts will be resolved.`);
    });
}

/** `dss alerts list`: the company's alerts, newest first. */
function registerAlertList(group: Command): void {
  group
    .command('list')
    .description("List the company's alerts, newest first (by when their condition started to hold)")
    .option('--state <state>', 'only OPEN or RESOLVED alerts', (value: string) => {
      const state = value.toUpperCase();
      if (state !== 'OPEN' && state !== 'RESOLVED') throw new InvalidArgumentError('expected OPEN or RESOLVED.');
      return state;
    })
    .option('--limit <n>', 'alerts per page (the service defaults to 100)', positiveInteger)
    .option('--cursor <cursor>', 'continue a listing from the cursor a previous page printed')
    .option('--all', 'follow every page')
    .addHelpText('after', '\nExamples:\n  dss alerts list --state OPEN\n  dss alerts list --all --json')
    .action(async (options: { state?: 'OPEN' | 'RESOLVED'; limit?: number; cursor?: string; all?: boolean }, command: Command) => {
      const { dss, json, company } = await invocationOf(command);
      const companyId = company();
      const state = options.state === undefined ? {} : { state: options.state };
      const listing = await readPages(
        async (cursor) =>
          expectOk(
            await dss.main.GET('/companies/{companyId}/alerts', {
              params: { path: { companyId }, query: { ...state, ...pageQuery(options.limit, cursor) } },
            }),
          ),
        options.all === true,
        options.cursor,
      );
      printListing(
        listing,
        json,
        [
          { head: 'ID', value: (alert) => alert.id },
          { head: 'STATE', value: (alert) => alert.state },
          { head: 'RULE', value: (alert) => alert.ruleName },
          {
            head: 'DEVICE',
            value: (alert) => (alert.target.subId === undefined ? alert.target.id : `${alert.target.id} ${alert.target.subId}`),
          },
          { head: 'RAISED', value: (alert) => alert.raisedAt },
          { head: 'RESOLVED', value: (alert) => alert.resolvedAt },
          { head: 'DETAIL', value: (alert) => alert.detail },
        ],
        { empty: options.state === undefined ? 'No alerts.' : `No ${options.state} alerts.`, more: 'alerts' },
      );
    });
}

/** `disconnected for 15 min`, `sub-device DOWN, WARNING for 5 min`, `battery below 20 %`. */
export function conditionText(condition: AlertCondition): string {
  switch (condition.type) {
    case 'DISCONNECTED_FOR':
      return `disconnected for ${condition.minutes} min`;
    case 'SUBDEVICE_STATE_FOR':
      return `sub-device ${condition.states.join(', ')} for ${condition.minutes} min`;
    default:
      return `battery below ${condition.percent} %`;
  }
}

/** A rule as a two-column table. */
function ruleRecord(rule: AlertRule): Record<string, unknown> {
  return {
    id: rule.id,
    name: rule.name,
    query: rule.query === '' ? '(every device)' : rule.query,
    condition: conditionText(rule.condition),
    by: rule.by,
    created: rule.created,
    updated: rule.updated,
  };
}
