import { z } from 'zod';
import { pageFields, pageMeta } from '../../platform/http/pagination.js';

const eventType = z
  .string()
  .regex(/^(\*|[a-z0-9][a-z0-9_.-]{0,99})$/, 'an event type (lowercase letters, digits, _ . -) or *');

const webhookId = '9d3e5f7a-1b2c-4d5e-8f90-a1b2c3d4e5f6';
const at = '2025-05-01T09:30:00.000Z';
const webhookExample = {
  id: webhookId,
  url: 'https://hooks.example.com/assistant',
  eventTypes: ['quest_completed', 'quest_started'],
  observerId: 3,
  description: 'Quest log of the guild site',
  enabled: true,
  createdByUserId: 1,
  createdAt: at,
  updatedAt: at,
};

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
  .meta({ id: 'Webhook', examples: [webhookExample] });
export type WebhookView = z.infer<typeof webhookSchema>;

/** Answered once, at creation and at a secret's rotation: the only time the secret is shown. */
export const webhookWithSecretSchema = webhookSchema
  .extend({ secret: z.string().describe('whsec_<base64>: verify signatures with it; never shown again') })
  .meta({
    id: 'WebhookWithSecret',
    examples: [{ ...webhookExample, secret: 'whsec_TP+2HpeDl5/z14Ec/t6+rh1Y/qCCYy34BdSnFpKgN3Q=' }],
  });

const webhookFields = z.object({
  url: z.url().max(2048),
  eventTypes: z.array(eventType).min(1).max(50),
  observerId: z.number().int().positive().nullable().optional(),
  description: z.string().trim().max(500).optional(),
  enabled: z.boolean().optional(),
});

export const createWebhookBody = webhookFields.meta({
  examples: [
    {
      url: 'https://hooks.example.com/assistant',
      eventTypes: ['quest_completed', 'quest_started'],
      observerId: 3,
      description: 'Quest log of the guild site',
    },
  ],
});
export type CreateWebhookInput = z.infer<typeof createWebhookBody>;

export const patchWebhookBody = webhookFields
  .partial()
  .meta({ examples: [{ eventTypes: ['*'], enabled: false }] });
export type PatchWebhookInput = z.infer<typeof patchWebhookBody>;

export const webhookIdParam = z.object({ id: z.uuid().meta({ examples: [webhookId] }) });
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
  .meta({
    id: 'WebhookDelivery',
    examples: [
      {
        id: '2c4e6a8b-0d1f-4a3c-9e5b-7d9f1b3d5f7a',
        webhookId,
        eventId: 901,
        eventType: 'quest_completed',
        status: 'succeeded',
        attempts: [
          { attempt: 1, at, statusCode: 503, error: 'answered 503: Service Unavailable', durationMs: 120 },
          { attempt: 2, at: '2025-05-01T09:30:05.000Z', statusCode: 200, error: null, durationMs: 85 },
        ],
        lastStatusCode: 200,
        lastError: null,
        createdAt: at,
        updatedAt: '2025-05-01T09:30:05.000Z',
        deliveredAt: '2025-05-01T09:30:05.000Z',
      },
    ],
  });
export type DeliveryView = z.infer<typeof deliverySchema>;

export const listDeliveriesQuery = z.object({ status: deliveryStatusSchema.optional(), ...pageFields() });

export const webhookListResponse = z.object({ webhooks: z.array(webhookSchema), ...pageMeta });
export const deliveryListResponse = z.object({ deliveries: z.array(deliverySchema), ...pageMeta });
