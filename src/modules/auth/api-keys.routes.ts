import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import type { AuthService } from './auth.service.js';
import { noContent, problems } from '../../platform/http/types.js';
import { apiKeySchema, createApiKeyBody, createdApiKeySchema } from './auth.schemas.js';

export function apiKeyRoutes(app: App, { auth }: { auth: AuthService }) {
  const config = { auth: 'admin' as const };
  const tags = ['admin'];

  app.post(
    '/api/admin/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'Create an API key (the key is shown once)',
        description:
          'Creates an API key with the given scopes (sync:read, sync:write for a world platform; chat-platform:command for a chat bot; players:write for a game server signing its players in; mcp for the MCP endpoint, acting as the administrator who creates it). The key is in this answer only: store it; only its hash is kept. Administrators only.',
        body: createApiKeyBody,
        response: { 201: createdApiKeySchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const k = await auth.createApiKey(
        req.body.name,
        req.body.scopes,
        req.body.userId ?? currentUser(req).id,
      );
      return reply.status(201).send({
        id: k.id,
        name: k.name,
        scopes: k.scopes,
        prefix: k.prefix,
        key: k.key,
        createdAt: k.created_at.toISOString(),
      });
    },
  );

  app.get(
    '/api/admin/api-keys',
    {
      config,
      schema: {
        tags,
        summary: 'List API keys',
        description:
          'Every API key with its scopes, prefix, creation, last use and revocation; never the key itself. Administrators only.',
        response: { 200: z.object({ apiKeys: z.array(apiKeySchema) }), ...problems(401, 403) },
      },
    },
    async () => ({ apiKeys: await auth.listApiKeys() }),
  );

  app.delete(
    '/api/admin/api-keys/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Revoke an API key',
        description:
          'Revokes an API key: every node refuses it at once. Revoking twice is harmless; an unknown id is 404. Administrators only.',
        params: z.object({
          id: z.coerce
            .number()
            .int()
            .positive()
            .meta({ examples: [3] }),
        }),
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await auth.revokeApiKey(req.params.id);
      return reply.status(204).send(null);
    },
  );
}
