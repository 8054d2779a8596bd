/**
 * The filter descriptors (`GET /resources/search/filters`), apart from the search's resource schemas (search.ts), which
 * the filters function does not answer with and need not build at cold start.
 */
import * as z from 'zod';
import { RESOURCE_TYPES } from '../../core/search/documents.js';
import { FILTER_FIELDS } from '../../core/search/registry.js';

const text = (description: string) => z.string().describe(description);

export const FilterDescriptor = z
  .object({
    field: z
      .enum(FILTER_FIELDS.map((field) => field.field) as [string, ...string[]])
      .describe('Filterable field; also the query parameter name.'),
    name: text(
      "The field's display name (e.g. `Connection state`), the same in every client. Added to the specified descriptor beside `field`: clients that ignore it lose nothing.",
    ),
    scope: z.enum(RESOURCE_TYPES).nullable().describe('Resource type the field applies to; null when not tied to one type.'),
    definition: z
      .object({
        type: z.literal('ENUMERATION').describe('Filter kind; ENUMERATION is the only kind.'),
        parameters: z
          .array(
            z
              .object({
                name: text('Display name.'),
                value: text('Value to pass as the filter parameter.'),
                count: z.int().min(0).describe("Resources currently matching this value, within the caller's companies."),
              })
              .strict(),
          )
          .describe('Selectable values. Fixed enumerations list every value, with count 0 where nothing matches.'),
      })
      .strict(),
  })
  .strict()
  .meta({ id: 'FilterDescriptor' });

export const FilterDescriptorList = z
  .object({ items: z.array(FilterDescriptor) })
  .strict()
  .meta({ id: 'FilterDescriptorList' });
