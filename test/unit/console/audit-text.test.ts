/**
 * The audit page's change text without a browser: what an administrator reads of an entry's before and after (a
 * change, a creation, a deletion), the bookkeeping dates left out.
 */
import { describe, expect, it } from 'vitest';
import { changeLines, valueText } from '../../../console/src/admin/audit-text.js';

describe('audit change text', () => {
  it('lists only the members that changed, before → after, lists joined with commas', () => {
    const before = { username: 'carol', role: 'viewer', companies: ['acme'], enabled: true, updatedAt: '2026-11-27T10:00:00.000Z' };
    const after = {
      username: 'carol',
      role: 'operator',
      companies: ['acme', 'globex'],
      enabled: false,
      updatedAt: '2026-11-27T11:00:00.000Z',
    };
    expect(changeLines(before, after)).toEqual(['role: viewer → operator', 'companies: acme → acme, globex', 'enabled: true → false']);
  });

  it('lists what a creation made and what a deletion removed, without the dates', () => {
    const company = { id: 'initech', name: 'Initech', quotaBytes: 10485760, createdAt: '2026-11-27T10:00:00.000Z' };
    expect(changeLines(undefined, company)).toEqual(['id: initech', 'name: Initech', 'quotaBytes: 10485760']);
    expect(changeLines({ username: 'erin', companies: [] }, undefined)).toEqual(['username: erin (deleted)', 'companies: none (deleted)']);
  });

  it('writes an absent member as a dash and an empty text as quotes', () => {
    expect(changeLines({ name: 'A' }, { name: '', email: 'a@example.com' })).toEqual(['name: A → ""', 'email: — → a@example.com']);
    expect(valueText({ nested: 1 })).toBe('{"nested":1}');
  });
});
