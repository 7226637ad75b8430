import { z } from 'zod';
import { pageQuery } from '../../platform/http/pagination.js';

export const idParam = z.object({ id: z.coerce.number().int().positive() });

export const conversationSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    npcUserIds: z.array(z.number().int()),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Conversation' });

export const createConversationBody = z.object({
  title: z.string().trim().max(200).optional(),
  npcUserIds: z.array(z.number().int().positive()).max(10).optional(),
});

export const listConversationsQuery = pageQuery;

export const messageSchema = z
  .object({
    id: z.number().int(),
    conversationId: z.number().int(),
    role: z.enum(['user', 'assistant']),
    npcUserId: z.number().int().nullable(),
    text: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'ChatMessage' });

export const historyQuery = z.object({
  conversationId: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().positive().optional().describe('only messages older than this message id'),
});

export const choicesQuery = z.object({ conversationId: z.coerce.number().int().positive().optional() });
export const choiceSchema = z.object({ id: z.string(), text: z.string() });

export const userPreferencesSchema = z
  .object({
    language: z.string().trim().min(2).max(35).optional(),
    responseLength: z.enum(['short', 'medium', 'long']).optional(),
    stream: z.boolean().optional(),
  })
  .strict();
export type UserPreferences = z.infer<typeof userPreferencesSchema>;
