/**
 * The console's alert words without a browser: a rule's condition in words, the rule form's fields read back as the
 * condition the service takes (or what to fix), a rule's query as a person reads it, and the dashboard's count of
 * open alerts, exact up to a page and "N+" beyond.
 */
import { describe, expect, it } from 'vitest';
import { conditionOf, conditionText, openAlertsText, readableQuery } from '../../../console/src/alerts/words.js';

describe('alert rules in words', () => {
  it('says each kind of condition with its figures', () => {
    expect(conditionText({ type: 'DISCONNECTED_FOR', minutes: 1 })).toBe('Disconnected for more than 1 minute');
    expect(conditionText({ type: 'SUBDEVICE_STATE_FOR', minutes: 1440, states: ['DOWN', 'WARNING'] })).toBe(
      'A sub-device DOWN or WARNING for more than 1,440 minutes',
    );
    expect(conditionText({ type: 'BATTERY_BELOW', percent: 20 })).toBe('A battery below 20 %');
  });

  it('reads the form into the condition of its kind, leaving out the fields of the other kinds', () => {
    const fields = { minutes: '15', percent: '20', states: ['WARNING', 'DOWN'] };
    expect(conditionOf({ kind: 'DISCONNECTED_FOR', ...fields })).toEqual({ condition: { type: 'DISCONNECTED_FOR', minutes: 15 } });
    expect(conditionOf({ kind: 'BATTERY_BELOW', ...fields })).toEqual({ condition: { type: 'BATTERY_BELOW', percent: 20 } });
    // The states in the form's order, whatever order they were ticked in.
    expect(conditionOf({ kind: 'SUBDEVICE_STATE_FOR', ...fields })).toEqual({
      condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 15, states: ['DOWN', 'WARNING'] },
    });
  });

  it('names what to fix: minutes or percent out of the service’s bounds or not whole, no state ticked', () => {
    for (const minutes of ['', '0', '1.5', '10081', 'soon'])
      expect(conditionOf({ kind: 'DISCONNECTED_FOR', minutes, percent: '', states: [] })).toEqual({
        error: 'The minutes are a whole number from 1 to 10,080 (7 days).',
      });
    expect(conditionOf({ kind: 'DISCONNECTED_FOR', minutes: '10080', percent: '', states: [] })).toEqual({
      condition: { type: 'DISCONNECTED_FOR', minutes: 10_080 },
    });
    for (const percent of ['0', '101', ''])
      expect(conditionOf({ kind: 'BATTERY_BELOW', minutes: '', percent, states: [] })).toEqual({
        error: 'The battery level is a whole percent from 1 to 100.',
      });
    expect(conditionOf({ kind: 'SUBDEVICE_STATE_FOR', minutes: '5', percent: '', states: [] })).toEqual({
      error: 'Choose at least one sub-device state.',
    });
  });

  it('reads a query string decoded, one filter after the other', () => {
    expect(readableQuery('location.name=Lyon+Part-Dieu&connection.state=DISCONNECTED&connection.state=UNKNOWN')).toBe(
      'location.name=Lyon Part-Dieu & connection.state=DISCONNECTED & connection.state=UNKNOWN',
    );
    expect(readableQuery('')).toBe('');
  });

  it('counts open alerts exactly up to a page, and says "N+" when the listing has more', () => {
    expect(openAlertsText(0, false)).toBe('No open alert');
    expect(openAlertsText(1, false)).toBe('1 open alert');
    expect(openAlertsText(42, false)).toBe('42 open alerts');
    expect(openAlertsText(100, true)).toBe('100+ open alerts');
  });
});
