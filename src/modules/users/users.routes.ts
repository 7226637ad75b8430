import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { UsersService } from './users.service.js';
import {
  adminUsersQuery,
  adminUsersResponse,
  patchUserBody,
  ownProfileSchema,
  profileSchema,
  userIdParam,
} from './users.schemas.js';
import { toProfile } from './users.service.js';

export function usersRoutes(app: App, { users }: { users: UsersService }) {
  app.get(
    '/api/user/profile',
    {
      schema: {
        tags: ['users'],
        summary: "The caller's profile",
        description:
          "The signed-in user's own profile: id, email, name, role, account type, energy coins, whether the email is verified, and `isAdmin`: whether the server grants this caller admin access now (role cso, silicon + developer, or an id in ADMIN_USER_IDS), so a client need not repeat the rule.",
        response: { 200: ownProfileSchema, ...problems(401) },
      },
    },
    async (req) => {
      const me = currentUser(req);
      return { ...(await users.profile(me.id)), isAdmin: me.admin };
    },
  );

  app.get(
    '/api/admin/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'List users',
        description:
          'Accounts, filtered by text (email or name), role and account type, with paging (`limit`, `offset`, `total`). Administrators only.',
        querystring: adminUsersQuery,
        response: { 200: adminUsersResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => {
      const { rows, total } = await users.list(req.query);
      return { users: rows.map(toProfile), total, limit: req.query.limit, offset: req.query.offset };
    },
  );

  app.patch(
    '/api/admin/users/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: "Change a user's role, account type or name (allowed combinations only)",
        description:
          "Changes an account's role, account type or name. Only the allowed role/account-type pairs are accepted (400 otherwise), and the change applies at once to the tokens and sockets already issued. Administrators only.",
        params: userIdParam,
        body: patchUserBody,
        response: { 200: profileSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => toProfile(await users.patch(req.params.id, req.body)),
  );
}
