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
        body: createApiKeyBody,
        response: { 201: createdApiKeySchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const k = await auth.createApiKey(req.body.name, req.body.scopes, currentUser(req).id);
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
        params: z.object({ id: z.coerce.number().int().positive() }),
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await auth.revokeApiKey(req.params.id);
      return reply.status(204).send(null);
    },
  );
}
