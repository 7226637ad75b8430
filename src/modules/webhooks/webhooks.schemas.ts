import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';

const eventType = z
  .string()
  .regex(/^(\*|[a-z0-9][a-z0-9_.-]{0,99})$/, 'an event type (lowercase letters, digits, _ . -) or *');

export const webhookSchema = z
  .object({
    id: z.uuid(),
    url: z.string(),
    eventTypes: z.array(z.string()),
    observerId: z.number().int().nullable(),
    description: z.string(),
    enabled: z.boolean(),
    createdByUserId: z.number().int().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });
export type WebhookView = z.infer<typeof webhookSchema>;

/** Answered once, at creation and at a secret's rotation: the only time the secret is shown. */
export const webhookWithSecretSchema = webhookSchema
  .extend({ secret: z.string().describe('whsec_<base64>: verify signatures with it; never shown again') })
  .meta({ id: 'WebhookWithSecret' });

export const createWebhookBody = z.object({
  url: z.url().max(2048),
  eventTypes: z.array(eventType).min(1).max(50),
  observerId: z.number().int().positive().nullable().optional(),
  description: z.string().trim().max(500).optional(),
  enabled: z.boolean().optional(),
});
export type CreateWebhookInput = z.infer<typeof createWebhookBody>;

export const patchWebhookBody = createWebhookBody.partial();
export type PatchWebhookInput = z.infer<typeof patchWebhookBody>;

export const webhookIdParam = z.object({ id: z.uuid() });
export const listWebhooksQuery = z.object(pageFields());

export const deliveryStatusSchema = z.enum(['pending', 'succeeded', 'failed']);

export const deliverySchema = z
  .object({
    id: z.uuid().describe('also the webhook-id header, the same at every attempt'),
    webhookId: z.uuid(),
    eventId: z.number().int().nullable().describe('the timeline event; null for a test delivery'),
    eventType: z.string(),
    status: deliveryStatusSchema,
    attempts: z.array(
      z.object({
        attempt: z.number().int(),
        at: z.iso.datetime(),
        statusCode: z.number().int().nullable(),
        error: z.string().nullable(),
        durationMs: z.number().int(),
      }),
    ),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.iso.datetime(),
    updatedAt: z.iso.datetime(),
    deliveredAt: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type DeliveryView = z.infer<typeof deliverySchema>;

export const listDeliveriesQuery = z.object({ status: deliveryStatusSchema.optional(), ...pageFields() });

export const webhookListResponse = z.object({ webhooks: z.array(webhookSchema), ...pageMeta });
export const deliveryListResponse = z.object({ deliveries: z.array(deliverySchema), ...pageMeta });
