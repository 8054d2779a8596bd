/** Bodies of the device-side routes (`/device/...`), which a device calls with its own token. */
import * as z from 'zod';
import { HEALTH_LIMITS, MAX_HEALTH_REPORT_BYTES } from '../../core/devices/health.js';
import { MAX_JSON_DEPTH } from '../../core/shared/json-depth.js';
import { withThousandsSeparators } from '../../core/shared/thousands.js';
import { deviceHealthMembers } from './search.js';

/** PUT /device/health: the device's `health` (DeviceHealth) as the device sees it; `updated` is the service's. */
export const DeviceHealthReport = z
  .object({
    updated: z.iso
      .datetime({ offset: true })
      .optional()
      .describe('Ignored when given (a device may send back the health it read): the service sets `health.updated` itself.'),
    ...deviceHealthMembers,
  })
  .strict()
  .meta({
    id: 'DeviceHealthReport',
    description: `The \`health\` object of the device resource (DeviceHealth), \`updated\` optional and ignored. Bounds: texts of ids, labels, versions, keys and names at most ${HEALTH_LIMITS.shortText} characters, messages and descriptions ${HEALTH_LIMITS.longText}; at most ${HEALTH_LIMITS.hubs} hubs, ${HEALTH_LIMITS.subDevices} sub-devices per hub, ${HEALTH_LIMITS.messages} messages and ${HEALTH_LIMITS.commands} commands per sub-device; ${MAX_JSON_DEPTH} levels of nested objects and arrays in all (a command's \`payload\` and \`arguments\` are at level 8); ${withThousandsSeparators(MAX_HEALTH_REPORT_BYTES)} bytes in all (serialized without white space). No text holds a control character (U+0000–U+001F, U+007F–U+009F) but messages and descriptions, which may hold tab, line feed and carriage return; a command's \`payload\` and \`arguments\` are free JSON.`,
  });
