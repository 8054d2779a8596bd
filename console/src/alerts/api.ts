/**
 * The alerts calls of the Alerts page, the fleet page's rule form and the dashboard, each answering its data or the
 * message to show (device/load.ts's Loaded): a company's alerts a page at a time (OPEN or RESOLVED ones, or both), its
 * rules, create a rule, delete one.
 */
import type { components } from '../../../client/index.js';
import { refusalText } from '../admin/refusal.js';
import { attempt, type Loaded } from '../device/load.js';
import { api, problemText } from '../session.js';

/** An alert: raised once per rule and device while the rule's condition holds, then RESOLVED. */
export type Alert = components['schemas']['Alert'];
/** OPEN or RESOLVED. */
export type AlertState = components['schemas']['AlertState'];
/** An alert rule: a device search query and a condition. */
export type AlertRule = components['schemas']['AlertRule'];
/** A rule's condition. */
export type AlertCondition = components['schemas']['AlertCondition'];
/** A new rule. */
export type AlertRuleCreate = components['schemas']['AlertRuleCreate'];
/** A sub-device health state a SUBDEVICE_STATE_FOR condition may name. */
export type SubDeviceState = Extract<AlertCondition, { type: 'SUBDEVICE_STATE_FOR' }>['states'][number];

/** A page of the company's alerts, newest first, `limit` of them, only those in `state` when given. */
export function loadAlerts(
  company: string,
  options: { state?: AlertState | undefined; limit?: number | undefined; cursor?: string | undefined; signal?: AbortSignal },
): Promise<Loaded<{ items: Alert[]; nextCursor: string | null }>> {
  const { state, limit, cursor, signal } = options;
  return attempt(() =>
    api.main.GET('/companies/{companyId}/alerts', {
      params: {
        path: { companyId: company },
        query: {
          ...(state === undefined ? {} : { state }),
          ...(limit === undefined ? {} : { limit }),
          ...(cursor === undefined ? {} : { cursor }),
        },
      },
      ...(signal === undefined ? {} : { signal }),
    }),
  );
}

/** The company's alert rules, oldest first (a company has at most 100). */
export function loadRules(company: string): Promise<Loaded<{ items: AlertRule[] }>> {
  return attempt(() => api.main.GET('/companies/{companyId}/alert-rules', { params: { path: { companyId: company } } }));
}

/** Creates a rule: it, or the refusal with each field the service names (`query.global: …`). */
export async function createRule(company: string, body: AlertRuleCreate): Promise<Loaded<AlertRule>> {
  try {
    const { data, error, response } = await api.main.POST('/companies/{companyId}/alert-rules', {
      params: { path: { companyId: company } },
      body,
    });
    if (data !== undefined) return { ok: true, data };
    return { ok: false, message: refusalText(error, response.status), status: response.status };
  } catch {
    return { ok: false, message: problemText(undefined) };
  }
}

/** Deletes a rule (its open alerts are resolved by the service). */
export function deleteRule(company: string, ruleId: string): Promise<Loaded<null>> {
  return attempt(async () => {
    const answer = await api.main.DELETE('/companies/{companyId}/alert-rules/{ruleId}', {
      params: { path: { companyId: company, ruleId } },
    });
    return { ...answer, data: answer.response.ok ? null : undefined };
  });
}
