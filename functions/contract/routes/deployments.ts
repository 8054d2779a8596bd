/** Deployment routes of the main address: execute (deploy/undeploy), history, active deployments. */
import { defineRoute } from '../route.js';

/** POST /companies/{companyId}/resources/deployments */
export const deploymentsExecute = defineRoute({
  id: 'DeploymentsExecute',
  api: 'main',
  method: 'POST',
  path: '/companies/{companyId}/resources/deployments',
  scope: 'deployments:write',
  companyParameter: 'companyId',
  entry: 'functions/handlers/deployments-execute.ts',
});

/** GET /companies/{companyId}/resources/deployments/history */
export const deploymentsHistory = defineRoute({
  id: 'DeploymentsHistory',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/deployments/history',
  scope: 'deployments:read',
  companyParameter: 'companyId',
  entry: 'functions/handlers/deployments-history.ts',
});

/** GET /companies/{companyId}/resources/DEVICE/deployments */
export const deploymentsListAll = defineRoute({
  id: 'DeploymentsListAll',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/DEVICE/deployments',
  scope: 'deployments:read',
  companyParameter: 'companyId',
  entry: 'functions/handlers/deployments-list.ts',
});

/** GET /companies/{companyId}/resources/{deviceId}/deployments */
export const deploymentsListDevice = defineRoute({
  id: 'DeploymentsListDevice',
  api: 'main',
  method: 'GET',
  path: '/companies/{companyId}/resources/{deviceId}/deployments',
  scope: 'deployments:read',
  companyParameter: 'companyId',
  entry: 'functions/handlers/deployments-list.ts',
});
