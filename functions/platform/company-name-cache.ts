/** The read-through cache of company names moved to the adapters; this path re-exports it for older importers. */
export { COMPANY_NAME_TTL_MS, CompanyNameCache } from '../adapters/company-name-cache.js';
