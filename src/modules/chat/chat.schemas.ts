import { z } from 'zod';
import { pageQuery } from '../../platform/http/pagination.js';
import { problemSchema } from '../../platform/http/problem.js';

export const idParam = z.object({
  id: z.coerce
    .number()
    .int()
    .positive()
    .meta({ examples: [12] }),
});

export const conversationSchema = z
  .object({
    id: z.number().int(),
    title: z.string(),
    npcUserIds: z.array(z.number().int()),
    directNpcUserId: z
      .number()
      .int()
      .nullable()
      .describe("the character of the player's own thread with it (direct messages), else null"),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'Conversation',
    examples: [
      {
        id: 12,
        title: 'At the forge',
        npcUserIds: [7],
        directNpcUserId: 7,
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });

export const createConversationBody = z
  .object({
    title: z.string().trim().max(200).optional(),
    npcUserIds: z.array(z.number().int().positive()).max(10).optional(),
  })
  .meta({ examples: [{ title: 'At the forge', npcUserIds: [7] }] });

export const listConversationsQuery = pageQuery;

export const messageSchema = z
  .object({
    id: z.number().int(),
    conversationId: z.number().int(),
    role: z.enum(['user', 'assistant']),
    npcUserId: z.number().int().nullable(),
    speaker: z
      .object({ id: z.number().int(), name: z.string() })
      .describe("who said it: the player for the player's messages, else the character (or the assistant)"),
    text: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({
    id: 'ChatMessage',
    examples: [
      {
        id: 345,
        conversationId: 12,
        role: 'assistant',
        npcUserId: 1,
        speaker: { id: 1, name: 'Assistant' },
        text: 'Good morning! How did the trip go?',
        createdAt: '2025-05-01T09:30:00.000Z',
      },
    ],
  });

export const historyQuery = z.object({
  conversationId: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().positive().optional().describe('only messages older than this message id'),
});

export const choicesQuery = z.object({ conversationId: z.coerce.number().int().positive().optional() });
export const choiceSchema = z
  .object({ id: z.string(), text: z.string() })
  .meta({ examples: [{ id: '345-0', text: 'Tell me about the lighthouse' }] });

export const userPreferencesSchema = z
  .object({
    language: z.string().trim().min(2).max(35).optional(),
    responseLength: z.enum(['short', 'medium', 'long']).optional(),
    stream: z.boolean().optional(),
  })
  .strict();
export type UserPreferences = z.infer<typeof userPreferencesSchema>;

// The default namespace's payloads (spec: "Default namespace"; contract: "Real time"). Client to
// server: validated by the turn (a bad one answers chatError validation_failed).
export const MAX_MESSAGE_CHARS = 8000;
export const MAX_IMAGES = 4;
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
// base64 grows data by 4/3; a data: URL prefix adds a little.
const MAX_IMAGE_BASE64 = Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 100;

export const chatMessageSchema = z.object({
  message: z.string().trim().min(1).max(MAX_MESSAGE_CHARS),
  clientMessageId: z.string().min(1).max(100).optional(),
  conversationId: z.number().int().positive().optional(),
  npcUserId: z.number().int().positive().optional(),
  /** The chat-platform channel (or the client's own named channel) the turn comes from: routing
   * applies its configured protocol (step 2); a channel without configuration routes as none. */
  channelId: z.string().trim().min(1).max(100).optional(),
  attachmentUrls: z.array(z.string().max(2048)).max(MAX_IMAGES).optional(),
  uploadContextId: z.string().min(1).max(100).optional(),
  imageBase64Array: z
    .array(z.string().max(MAX_IMAGE_BASE64, `an image may be at most ${MAX_IMAGE_BYTES} bytes`))
    .max(MAX_IMAGES)
    .optional(),
  preferences: userPreferencesSchema.optional(),
  /** One of the caller's persona sessions: the turn runs in its conversation, as its persona. */
  personaSessionId: z.uuid().optional(),
});
export type ChatMessageInput = z.infer<typeof chatMessageSchema>;

export const directNpcMessageSchema = z.object({
  npcUserId: z.number().int().positive(),
  message: z.string().trim().min(1).max(MAX_MESSAGE_CHARS),
  clientMessageId: z.string().min(1).max(100).optional(),
  preferences: userPreferencesSchema.optional(),
});

// Server to client.
export const assistantThinkingEvent = z.object({ conversationId: z.number().int() });

export const assistantResponseDeltaEvent = z.object({
  conversationId: z.number().int(),
  /** The id the reply will be stored with (reserved before the model is called). */
  messageId: z.number().int(),
  delta: z.string(),
});

export const assistantResponseEvent = z.object({
  conversationId: z.number().int(),
  messageId: z.number().int(),
  npcUserId: z.number().int(),
  npcName: z.string(),
  text: z.string(),
  createdAt: z.iso.datetime(),
  usage: z
    .object({ inputTokens: z.number().int(), outputTokens: z.number().int() })
    .optional()
    .describe("the turn's token usage over its model calls (on the turn's first reply)"),
  /** The tools the turn ran for this reply, each with its result (inventoryUpdate follows a change). */
  toolResults: z.array(z.object({ name: z.string(), result: z.unknown() })).optional(),
});

export const assistantIdleEvent = z.object({ conversationId: z.number().int() });

export const npcThinkingEvent = z.object({ npcUserId: z.number().int() });

export const directNpcResponseEvent = z.object({
  npcUserId: z.number().int(),
  npcName: z.string(),
  messageId: z.number().int(),
  text: z.string(),
  createdAt: z.iso.datetime(),
});

/** A turn's chatError: the problem plus the ids the client needs to match it to its message. */
export const chatErrorEvent = problemSchema.extend({
  conversationId: z.number().int().nullable(),
  clientMessageId: z.string().nullable(),
});

/** A turn's ack: its ids when answered, else the chatError payload it also emitted. */
export const chatAckSchema = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), conversationId: z.number().int(), messageId: z.number().int() }),
  z.object({ ok: z.literal(false), error: chatErrorEvent }),
]);
