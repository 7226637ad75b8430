import { currentUser } from '../../platform/http/auth.js';
import { noContent, problems, type App } from '../../platform/http/types.js';
import {
  createWebhookBody,
  deliveryListResponse,
  deliverySchema,
  listDeliveriesQuery,
  listWebhooksQuery,
  patchWebhookBody,
  webhookIdParam,
  webhookListResponse,
  webhookSchema,
  webhookWithSecretSchema,
} from './webhooks.schemas.js';
import type { WebhooksService } from './webhooks.service.js';

export interface WebhooksRoutesOptions {
  webhooks: WebhooksService;
}

export function webhooksRoutes(app: App, { webhooks }: WebhooksRoutesOptions) {
  const tags = ['webhooks'];
  const admin = { auth: 'admin' as const };

  app.get(
    '/api/admin/webhooks',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Registered webhook endpoints, newest first',
        querystring: listWebhooksQuery,
        response: { 200: webhookListResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => webhooks.list(req.query.limit, req.query.offset),
  );

  app.post(
    '/api/admin/webhooks',
    {
      config: admin,
      schema: {
        tags,
        summary:
          'Register an endpoint for timeline events; the answer holds its signing secret, shown this once',
        body: createWebhookBody,
        response: { 201: webhookWithSecretSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await webhooks.create(req.body, currentUser(req).id)),
  );

  app.get(
    '/api/admin/webhooks/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'One webhook endpoint (never its secret)',
        params: webhookIdParam,
        response: { 200: webhookSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => webhooks.get(req.params.id),
  );

  app.patch(
    '/api/admin/webhooks/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Change an endpoint’s URL, event types, observer, description or enabled flag',
        params: webhookIdParam,
        body: patchWebhookBody,
        response: { 200: webhookSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => webhooks.update(req.params.id, req.body),
  );

  app.delete(
    '/api/admin/webhooks/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete an endpoint with its delivery log; its pending deliveries are dropped',
        params: webhookIdParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await webhooks.remove(req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.post(
    '/api/admin/webhooks/:id/secret',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Replace the signing secret; the answer shows the new one this once',
        params: webhookIdParam,
        response: { 200: webhookWithSecretSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => webhooks.rotateSecret(req.params.id),
  );

  app.get(
    '/api/admin/webhooks/:id/deliveries',
    {
      config: admin,
      schema: {
        tags,
        summary: 'The endpoint’s delivery log, newest first, each with its attempts',
        params: webhookIdParam,
        querystring: listDeliveriesQuery,
        response: { 200: deliveryListResponse, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => webhooks.deliveries(req.params.id, req.query),
  );

  app.post(
    '/api/admin/webhooks/:id/test',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Queue a `webhook.test` delivery to the endpoint (whatever its filters)',
        params: webhookIdParam,
        response: { 202: deliverySchema, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(202).send(await webhooks.sendTest(req.params.id, currentUser(req).id)),
  );
}
