// `POST /api/admin/prompts/preview` (contract: "Admin zones"): the system prompt, tools and
// retrieved memories a chat turn of a user would use now, composed by the turn's own code.
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { ChatService } from './chat.service.js';
import { MAX_MESSAGE_CHARS, userPreferencesSchema } from './chat.schemas.js';

const previewBody = z
  .object({
    userId: z.number().int().positive(),
    npcUserId: z.number().int().positive().optional(),
    channelId: z.string().trim().min(1).max(100).optional().describe('the chat-platform channel (routing)'),
    personaSessionId: z.uuid().optional().describe("one of the user's persona sessions"),
    conversationId: z.number().int().positive().optional(),
    direct: z
      .boolean()
      .optional()
      .describe(
        "a direct message's turn (directNpcMessage): the character alone, in the player's own thread with it",
      ),
    message: z
      .string()
      .max(MAX_MESSAGE_CHARS)
      .optional()
      .describe('drives retrieval, as the message of a turn'),
    preferences: userPreferencesSchema.optional(),
  })
  .strict()
  .meta({
    examples: [
      {
        userId: 7,
        npcUserId: 12,
        channelId: 'support',
        message: 'Where did we leave the harbour map?',
        preferences: { language: 'en', responseLength: 'short' },
      },
    ],
  });

const previewResponse = z
  .object({
    userId: z.number().int(),
    npcUserId: z.number().int().nullable(),
    protocolId: z.string(),
    protocol: z.string(),
    enforced: z.boolean(),
    reason: z.string(),
    personaType: z.string().nullable(),
    system: z.string(),
    tools: z.array(
      z.object({
        name: z.string(),
        description: z.string(),
        parameters: z.record(z.string(), z.unknown()).nullable(),
      }),
    ),
    memories: z.array(
      z.object({
        id: z.number().int(),
        source: z.string(),
        tier: z.string(),
        content: z.string(),
        similarity: z.number().nullable().describe("retrieval's score in [0, 1]"),
        owner: z
          .object({ id: z.number().int(), name: z.string() })
          .nullable()
          .describe('whose memory it is: the player, a speaker, or who wrote a world memory'),
      }),
    ),
    context: z
      .object({
        playerState: z
          .unknown()
          .describe("the speaking character's state and its relationship with the player"),
        playerQuests: z.unknown().describe('active quests, and closed ones when the budget allows'),
        playerInventory: z.unknown(),
        systemWideKnowledge: z
          .unknown()
          .describe('the routing decision, and the system figures or observer view the protocol grants'),
        dropped: z
          .record(z.string(), z.number().int())
          .describe('what the context budget left out: part → entries, in the order parts are dropped'),
      })
      .describe("the turn's context beyond memories, as the prompt's sections were made from it"),
  })
  .meta({ id: 'PromptPreview' });

export function previewRoutes(app: App, { chat }: { chat: ChatService }) {
  app.post(
    '/api/admin/prompts/preview',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin'],
        summary:
          'The exact system prompt, tools and retrieved memories a chat turn would use now (no chat call, nothing stored)',
        description:
          "Administrators only. Composes, with a chat turn's own code, what a turn of the user would send now: the routed protocol and why, the system prompt, the tools and the memories `message` retrieves. Nothing is sent to a model and nothing is stored. 404 for an unknown user; 400 for a persona session or conversation that is not the user's, or a character the turn could not answer with.",
        body: previewBody,
        response: { 200: previewResponse, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => chat.previewPrompt(req.body),
  );
}
