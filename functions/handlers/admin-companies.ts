import { adminCompaniesList, adminCompanyCreate, adminCompanyGet, adminCompanyUpdate } from '../contract/routes/admin.js';
import { createCompany, getCompany, listCompanies, updateCompany } from '../core/companies/admin.js';
import { companyAdministration } from '../platform/composition/audit.js';
import { storage } from '../platform/composition/storage.js';
import { userDirectory } from '../platform/composition/users.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

const create = routeHandler(adminCompanyCreate, async ({ body }, { principal }) => {
  const companies = companyAdministration();
  const company = await createCompany({ companies, users: await userDirectory() }, principal, body);
  return jsonResponse(201, company, { location: `/admin/companies/${encodeURIComponent(company.id)}` });
});

const list = routeHandler(adminCompaniesList, async ({ query }, { principal }) => {
  const { companies } = storage();
  return jsonResponse(200, await listCompanies({ companies, users: await userDirectory() }, principal, query));
});

const get = routeHandler(adminCompanyGet, async ({ params }, { principal }) => {
  const { companies, deviceCounts } = storage();
  return jsonResponse(
    200,
    await getCompany({ companies, devices: deviceCounts, users: await userDirectory() }, principal, params.companyId),
  );
});

const update = routeHandler(adminCompanyUpdate, async ({ params, body }, { principal }) => {
  const companies = companyAdministration();
  return jsonResponse(200, await updateCompany({ companies, users: await userDirectory() }, principal, params.companyId, body));
});

/**
 * The companies administration routes, one function for the four (one role, one log group, one set of alarms: the
 * stateless stack stays within CloudFormation's 500 resources):
 * POST {base_url}/admin/companies (201 with `Location`; 409 when the id exists), GET {base_url}/admin/companies
 * (`{ items, nextCursor }`), GET {base_url}/admin/companies/{companyId} (with `deviceCount` and `userCount`; 404 when absent) and
 * PATCH {base_url}/admin/companies/{companyId} (the company after the change, `overQuota` when below its usage).
 */
export const handler = routeDispatcher([
  [adminCompanyCreate, create],
  [adminCompaniesList, list],
  [adminCompanyGet, get],
  [adminCompanyUpdate, update],
]);
