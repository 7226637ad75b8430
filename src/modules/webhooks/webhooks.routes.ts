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
        description:
          'Every registered outbound webhook endpoint, newest first, with paging (`limit`, `offset`, `total`); their signing secrets are never shown. Administrators only.',
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
        description:
          'Registers an endpoint to which every committed timeline event of the given types (or `*`) is POSTed, of one observer’s events only when `observerId` is set (else of all). Deliveries are signed the Standard Webhooks way (`webhook-id`, `webhook-timestamp`, `webhook-signature`) with the secret in the answer, which is never shown again, and retried with backoff. A URL the server may not call (private or loopback addresses) or an unknown observer is 400. Administrators only.',
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
        description:
          'One registered endpoint with its filters and enabled flag; its signing secret is never shown (rotate it for a new one). Unknown id: 404. Administrators only.',
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
        description:
          'Changes the fields given and keeps the others; `observerId: null` removes the observer filter, and a disabled endpoint gets no new deliveries (its pending ones fail). The URL and observer are checked as at registration (400). Unknown id: 404. Administrators only.',
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
        description:
          'Deletes the endpoint for good, with its delivery log; deliveries still pending are not sent. Answers 204; an unknown id is 404. Administrators only.',
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
        description:
          'Replaces the endpoint’s signing secret with a new one, shown in this answer only; the old one signs nothing from now on, pending retries included. Unknown id: 404. Administrators only.',
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
        description:
          'The deliveries to this endpoint, newest first, optionally of one `status` (pending, succeeded, failed), with paging; each lists its attempts with their HTTP status, error and duration. Unknown id: 404. Administrators only.',
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
        description:
          'Queues a signed `webhook.test` delivery to the endpoint, whatever its event types and observer, and answers 202 with the pending delivery (follow it in the delivery log). A disabled endpoint is 409; an unknown id 404. Administrators only.',
        params: webhookIdParam,
        response: { 202: deliverySchema, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.status(202).send(await webhooks.sendTest(req.params.id, currentUser(req).id)),
  );
}
