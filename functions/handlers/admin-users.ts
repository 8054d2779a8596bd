import {
  adminUserCreate,
  adminUserDelete,
  adminUserGet,
  adminUserResetPassword,
  adminUsersList,
  adminUserUpdate,
} from '../contract/routes/admin-users.js';
import { deleteUser, getUser, inviteUser, listUsers, resetUserPassword, type UserAdminPorts, updateUser } from '../core/users/admin.js';
import { auditLog } from '../platform/composition/audit.js';
import { storage } from '../platform/composition/storage.js';
import { userDirectory } from '../platform/composition/users.js';
import { jsonResponse, routeHandler } from '../platform/http.js';
import { routeDispatcher } from '../platform/router.js';

// At cold start: a function without CURSOR_SIGNING_KEY fails its initialization, naming the variable.
storage().cursors.load();

async function ports(): Promise<UserAdminPorts> {
  const { companies, cursors } = storage();
  return { users: await userDirectory(), companies, audit: auditLog(), cursors };
}

const create = routeHandler(adminUserCreate, async ({ body }, { principal }) => {
  const invited = await inviteUser(await ports(), principal, body);
  // The answer may hold a temporary password: no cache keeps it (RFC 9111 §5.2.2.5).
  return jsonResponse(201, invited, {
    location: `/admin/users/${encodeURIComponent(invited.user.username)}`,
    'cache-control': 'no-store',
  });
});

const list = routeHandler(adminUsersList, async ({ query }, { principal }) =>
  jsonResponse(200, await listUsers(await ports(), principal, query)),
);

const get = routeHandler(adminUserGet, async ({ params }, { principal }) =>
  jsonResponse(200, await getUser(await ports(), principal, params.username)),
);

const update = routeHandler(adminUserUpdate, async ({ params, body }, { principal }) =>
  jsonResponse(200, await updateUser(await ports(), principal, params.username, body)),
);

const remove = routeHandler(adminUserDelete, async ({ params }, { principal }) => {
  await deleteUser(await ports(), principal, params.username);
  return { statusCode: 204 };
});

const resetPassword = routeHandler(adminUserResetPassword, async ({ params }, { principal }) =>
  jsonResponse(200, await resetUserPassword(await ports(), principal, params.username), { 'cache-control': 'no-store' }),
);

/**
 * The users administration routes, one function for the six (one role, one log group, one set of alarms):
 * POST {base_url}/admin/users (201 with `Location`; 409 when the username is taken), GET {base_url}/admin/users
 * (`{ items, nextCursor }`), GET, PATCH and DELETE {base_url}/admin/users/{username}, and
 * POST {base_url}/admin/users/{username}/reset-password (the one POST under a username).
 */
export const handler = routeDispatcher([
  [adminUserCreate, create],
  [adminUsersList, list],
  [adminUserGet, get],
  [adminUserUpdate, update],
  [adminUserDelete, remove],
  [adminUserResetPassword, resetPassword],
]);
