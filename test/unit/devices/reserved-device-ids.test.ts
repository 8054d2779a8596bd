/** The device registry's light list of reserved ids is the route table's: same segments, same order. */
import { describe, expect, it } from 'vitest';
import { RESERVED_DEVICE_IDS } from '../../../functions/contract/reserved-device-ids.js';
import { RESERVED_DEVICE_IDS as FROM_ROUTES } from '../../../functions/contract/routes.js';

describe('RESERVED_DEVICE_IDS', () => {
  it('lists exactly the literal segments after `resources` of every route', () => {
    expect([...RESERVED_DEVICE_IDS]).toEqual([...FROM_ROUTES]);
  });
});
