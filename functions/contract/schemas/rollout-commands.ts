/**
 * What COMMAND rollouts add to the rollout schemas (docs/rollouts.md, "Command rollouts"): the command of a create
 * body and of a rollout, the causes a target's result may have, the commands the targets listing shows, and a dry
 * run's answer.
 */
import * as z from 'zod';
import { COMMAND_NOT_ADVERTISED } from '../../core/commands/commands.js';
import { DEFAULT_COMMAND_EXPIRY_SECONDS, MAX_COMMAND_EXPIRY_SECONDS, MIN_COMMAND_EXPIRY_SECONDS } from '../../core/commands/model.js';
import { DEPLOYMENT_CAUSES } from '../../core/deployments/deployments.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { boundedJson, CommandState, healthName } from './commands.js';

const count = withThousandsSeparators;

/** The `command` of a COMMAND rollout's create body (the core's RolloutCreateInput.command). */
export const RolloutCommandBody = z
  .strictObject({
    command: healthName(
      'The name of the command to run: each target gets it on every sub-device that advertises it in its latest health report (`health.hubs[].devices[].commands[].command`).',
    ),
    arguments: boundedJson('Arguments sent with every command, as sent.').optional(),
    expiresInSeconds: z
      .int()
      .min(MIN_COMMAND_EXPIRY_SECONDS)
      .max(MAX_COMMAND_EXPIRY_SECONDS)
      .optional()
      .describe(
        `Seconds from when a command is queued (its wave's work reaching its target) until it becomes EXPIRED if not final, ${MIN_COMMAND_EXPIRY_SECONDS} to ${count(MAX_COMMAND_EXPIRY_SECONDS)}; default ${count(DEFAULT_COMMAND_EXPIRY_SECONDS)}.`,
      ),
  })
  .meta({ id: 'RolloutCommandBody', examples: [{ command: 'reboot', expiresInSeconds: 600 }] });

/** The command of a COMMAND rollout, as every rollout route answers it (the core's RolloutCommand). */
export const RolloutCommand = z
  .object({
    command: z.string().describe('The command run on each target’s advertising sub-devices.'),
    arguments: z.unknown().describe('Sent with every command; null when none were given.'),
    expiresInSeconds: z.int().min(MIN_COMMAND_EXPIRY_SECONDS).max(MAX_COMMAND_EXPIRY_SECONDS).describe('Each command’s lifetime, seconds.'),
  })
  .strict()
  .meta({ id: 'RolloutCommand', description: 'What a COMMAND rollout runs.' });

/** The causes of a target's FAILURE: a deployment's, or COMMAND_NOT_ADVERTISED. */
export const ROLLOUT_TARGET_CAUSES = [...DEPLOYMENT_CAUSES, COMMAND_NOT_ADVERTISED] as const;

export const RolloutTargetCause = z.enum(ROLLOUT_TARGET_CAUSES).meta({
  id: 'RolloutTargetCause',
  description:
    'Why the rollout could not act on a target: a deployment cause (see DeploymentCause; NONE: a backend error), or, for a COMMAND rollout, COMMAND_NOT_ADVERTISED (no sub-device of the target advertises the command in its latest health report) or TARGET_NOT_FOUND.',
});

/** One command a COMMAND rollout queued on a target, as the targets listing shows it. */
export const RolloutTargetCommand = z
  .object({
    id: z.string().describe('The command (`GET …/devices/{deviceId}/commands/{id}`).'),
    subId: z.string().describe('`{hub uid}/{sub-device uid}`: the sub-device it runs on.'),
    state: CommandState,
    updated: z.iso.datetime({ offset: true }).describe('Its last change of state.'),
    message: z.string().optional().describe('What the device said with its result, when it said something.'),
  })
  .strict()
  .meta({ id: 'RolloutTargetCommand' });

/** What a COMMAND rollout would do on its targets (the core's CommandPreview). */
const CommandPreview = z
  .object({
    advertising: z.int().min(0).describe('Targets with at least one sub-device advertising the command: each would get it.'),
    notAdvertising: z
      .int()
      .min(0)
      .describe('Targets that advertise it nowhere: each would be a FAILURE with cause COMMAND_NOT_ADVERTISED.'),
    notFound: z.int().min(0).describe('Listed ids no device of the company has: each would be a FAILURE with cause TARGET_NOT_FOUND.'),
    commands: z.int().min(0).describe('Commands it would queue: one per advertising sub-device.'),
    bySubDeviceType: z
      .record(z.string(), z.int().min(0))
      .describe('Those commands by the sub-device’s `capability.type` (PRINTER, SCANNER, …).'),
  })
  .strict()
  .meta({ id: 'RolloutCommandPreview' });

/** The answer of `POST …/rollouts?dryRun=true` (the core's RolloutPreview). */
export const RolloutPreview = z
  .object({
    dryRun: z.literal(true),
    action: z.enum(['DEPLOY', 'UNDEPLOY', 'COMMAND']),
    targets: z.int().min(0).describe('How many devices the targets resolve to now.'),
    waves: z.array(z.int().min(0)).describe('The sizes of the waves it would run, in order.'),
    command: CommandPreview.optional().describe(
      'COMMAND only: what the targets’ latest health reports advertise now (read as the worker will read them; a report sent meanwhile changes what a chunk finds).',
    ),
  })
  .strict()
  .meta({
    id: 'RolloutPreview',
    description: 'What creating the rollout would do; nothing was written.',
    examples: [
      {
        dryRun: true,
        action: 'COMMAND',
        targets: 120,
        waves: [10, 110],
        command: { advertising: 117, notAdvertising: 3, notFound: 0, commands: 140, bySubDeviceType: { PRINTER: 117, SCANNER: 23 } },
      },
    ],
  });
