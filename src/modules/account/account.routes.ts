// The account's own data (contract: "Doors for games"): its export and its erasure, by the
// account itself or by an administrator.
import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import { userIdParam } from '../users/index.js';
import type { AccountService } from './account.service.js';

const exportSchema = z
  .object({
    exportedAt: z.iso.datetime(),
    profile: z.record(z.string(), z.unknown()),
    memories: z.array(z.unknown()),
    conversations: z.array(z.unknown()).describe('each conversation with its messages, oldest first'),
    inventory: z.unknown(),
    ledger: z.array(z.unknown()).describe("every change of the account's coins and items"),
    timeline: z.array(z.unknown()).describe('the timeline events about the account, newest first'),
  })
  .meta({
    id: 'AccountExport',
    examples: [
      {
        exportedAt: '2025-05-01T09:30:00.000Z',
        profile: {
          id: 42,
          email: null,
          name: 'Ada',
          role: 'carbon',
          accountType: 'public',
          energy_coins: 25,
        },
        memories: [{ id: 9, userId: 42, content: 'My horse is called Blaze.', source: 'shared' }],
        conversations: [
          { id: 12, title: 'Conversation', messages: [{ id: 345, role: 'user', text: 'Hello' }] },
        ],
        inventory: { items: [], energy_coins: 25 },
        ledger: [{ id: 1, kind: 'currency', delta: 25, balance_before: 0, balance_after: 25 }],
        timeline: [{ id: 981, eventType: 'arrived_at_harbour', eventText: 'Reached the harbour' }],
      },
    ],
  });

const eraseBody = z
  .object({
    password: z.string().min(1).max(256).optional().describe("the account's password, when it has one"),
  })
  .meta({ examples: [{ password: 'a long password' }] });

export function accountRoutes(app: App, { account }: { account: AccountService }) {
  app.get(
    '/api/user/export',
    {
      schema: {
        tags: ['users'],
        summary: "Everything of the caller's, as one JSON document",
        description:
          "The caller's profile, memories, conversations with their messages, inventory, economy ledger and the timeline events about them, as one JSON document (a download). Your own access token.",
        response: { 200: exportSchema, ...problems(401) },
      },
    },
    async (req, reply) => {
      const user = currentUser(req);
      void reply.header('content-disposition', `attachment; filename="account-${user.id}.json"`);
      return account.export(user.id);
    },
  );

  app.delete(
    '/api/user/account',
    {
      schema: {
        tags: ['users'],
        summary: "Erase the caller's account",
        description:
          "Erases the caller's account for good: its sessions (every token stops working at once), memories, conversations and messages, inventory and linked logins. The economy ledger keeps its rows under the account's id, which then names no one, so balances and audits still add up; timeline events about the account lose their user. An account with a password sends it (`invalid_credentials` otherwise); one without (a game's player) must call from a session signed in within the last 10 minutes (403 `session_not_recent`).",
        body: eraseBody.nullish(),
        response: { 204: noContent, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => {
      await account.eraseOwn(currentUser(req), req.body?.password);
      return reply.status(204).send(null);
    },
  );

  app.delete(
    '/api/admin/users/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary: 'Erase an account',
        description:
          'The same erasure as DELETE /api/user/account, by an administrator: sessions, memories, conversations, inventory and linked logins go; ledger rows stay under the id. A character is deleted as one (DELETE /api/admin/data/npcs/{id}, 409 here), and your own account with DELETE /api/user/account. Administrators only.',
        params: userIdParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      await account.eraseByAdmin(currentUser(req).id, req.params.id);
      return reply.status(204).send(null);
    },
  );
}
