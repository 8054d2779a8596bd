/** Reading a company's alerts (docs/alerts.md): raised and resolved by the evaluation and the sweeper, never by a request. */
import { NotFoundError } from '../shared/errors.js';
import type { ListParameters, Page } from '../shared/paging.js';
import { authorizeCompany, type Principal } from '../shared/principal.js';
import type { Alert, AlertState } from './model.js';
import type { AlertStore } from './ports.js';

/**
 * A company's alerts, newest first (by when their condition started to hold), only OPEN or RESOLVED ones when `state`
 * is given. @throws ForbiddenError for a company not the caller's; BadRequestError for a cursor of another listing.
 */
export async function listAlerts(
  deps: { alerts: Pick<AlertStore, 'listAlerts'> },
  principal: Principal,
  company: string,
  { limit, cursor, state }: ListParameters & { state?: AlertState | undefined },
): Promise<Page<Alert>> {
  authorizeCompany(principal, company);
  return deps.alerts.listAlerts(company, state, limit, cursor);
}

/** One alert. @throws ForbiddenError for a company not the caller's; NotFoundError for an unknown alert. */
export async function getAlert(
  deps: { alerts: Pick<AlertStore, 'getAlert'> },
  principal: Principal,
  company: string,
  alertId: string,
): Promise<Alert> {
  authorizeCompany(principal, company);
  const alert = await deps.alerts.getAlert(company, alertId);
  if (alert === undefined) throw new NotFoundError(`Company '${company}' has no alert '${alertId}'.`);
  return alert;
}
