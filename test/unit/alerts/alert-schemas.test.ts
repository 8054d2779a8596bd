/**
 * What the alert rule routes accept: a rule's query is read as a continuous rollout's (filters only, each parameter
 * named when refused), its name, minutes, percent and states bounded; nothing else reaches the use cases.
 */
import { describe, expect, it } from 'vitest';
import { AlertRuleCreateBody, AlertRulePatchBody, parseRuleQuery } from '../../../functions/contract/schemas/alerts.js';

const valid = { name: 'Lyon offline', query: 'connection.state=DISCONNECTED', condition: { type: 'DISCONNECTED_FOR', minutes: 15 } };

/** The paths of the issues a body has, `a.b` for a member. */
const issuesOf = (body: unknown) => {
  const parsed = AlertRuleCreateBody.safeParse(body);
  return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
};

describe('a rule query', () => {
  it('parses into the filters a search would make of it, values of one parameter together', () => {
    const parsed = parseRuleQuery(
      'connection.state=DISCONNECTED&health.hubs.devices.health.state=DOWN&health.hubs.devices.health.state=WARNING',
    );
    expect('selection' in parsed && Object.fromEntries(parsed.selection.filters)).toEqual({
      'connection.state': ['DISCONNECTED'],
      'health.hubs.devices.health.state': ['DOWN', 'WARNING'],
    });
    expect(parseRuleQuery('')).toMatchObject({ selection: { companies: [] } });
  });

  it('refuses full-text, paging, sorting, another type and unknown parameters, naming each in words about rules', () => {
    const parsed = parseRuleQuery('global=lyon&page=2&type=SCENARIO&colour=red&connection.state=SOMETIMES');
    expect('violations' in parsed).toBe(true);
    const violations = 'violations' in parsed ? parsed.violations : [];
    expect(violations.map((violation) => violation.path).sort()).toEqual(['colour', 'connection.state', 'global', 'page', 'type']);
    expect(violations.find((violation) => violation.path === 'global')?.message).toContain("a rule's devices");
    expect(JSON.stringify(violations)).not.toContain('rollout');
  });
});

describe('a rule body', () => {
  it('accepts each condition within its bounds', () => {
    expect(issuesOf(valid)).toEqual([]);
    expect(issuesOf({ ...valid, condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 10_080, states: ['DOWN'] } })).toEqual([]);
    expect(issuesOf({ ...valid, condition: { type: 'BATTERY_BELOW', percent: 1 } })).toEqual([]);
  });

  it('refuses a name too long, minutes and percent out of bounds, unknown states and members of another condition', () => {
    expect(issuesOf({ ...valid, name: 'x'.repeat(129) })).toEqual(['name']);
    expect(issuesOf({ ...valid, name: 'two\nlines' })).toEqual(['name']);
    expect(issuesOf({ ...valid, condition: { type: 'DISCONNECTED_FOR', minutes: 0 } })).toEqual(['condition.minutes']);
    expect(issuesOf({ ...valid, condition: { type: 'DISCONNECTED_FOR', minutes: 10_081 } })).toEqual(['condition.minutes']);
    expect(issuesOf({ ...valid, condition: { type: 'BATTERY_BELOW', percent: 101 } })).toEqual(['condition.percent']);
    expect(issuesOf({ ...valid, condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 5, states: ['BROKEN'] } })).toEqual([
      'condition.states.0',
    ]);
    expect(issuesOf({ ...valid, condition: { type: 'SUBDEVICE_STATE_FOR', minutes: 5, states: [] } })).toEqual(['condition.states']);
    expect(issuesOf({ ...valid, condition: { type: 'BATTERY_BELOW', percent: 10, minutes: 5 } })).toEqual(['condition']);
    expect(issuesOf({ ...valid, query: 'global=lyon' })).toEqual(['query.global']);
  });

  it('accepts the examples the API reference shows', () => {
    for (const schema of [AlertRuleCreateBody, AlertRulePatchBody]) {
      const examples = (schema.meta()?.examples ?? []) as unknown[];
      expect(examples.length).toBeGreaterThan(0);
      for (const example of examples) expect(schema.safeParse(example).success, JSON.stringify(example)).toBe(true);
    }
  });

  it('needs something to change in a patch', () => {
    expect(AlertRulePatchBody.safeParse({}).success).toBe(false);
    expect(AlertRulePatchBody.safeParse({ name: 'Renamed' }).success).toBe(true);
  });
});
