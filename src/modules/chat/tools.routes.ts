import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { ChatService } from './chat.service.js';

const toolSchema = z
  .object({ name: z.string(), description: z.string(), parameters: z.record(z.string(), z.unknown()) })
  .meta({
    id: 'Tool',
    examples: [
      {
        name: 'lookupMemory',
        description: "Search the player's memories",
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    ],
  });

export function toolRoutes(app: App, { chat }: { chat: ChatService }) {
  app.get(
    '/api/tools',
    {
      schema: {
        tags: ['assistant'],
        summary:
          'The tools the model can use in a chat turn, with the JSON Schema of their arguments (each protocol allows a subset)',
        description:
          "The tools a chat turn may offer the model (modifyInventory, modifyCurrency, lookupMemory), with the JSON Schema of their arguments; the caller's protocol decides which a turn offers.",
        response: { 200: z.object({ tools: z.array(toolSchema) }), ...problems(401) },
      },
    },
    async () => ({
      tools: chat
        .toolCatalogue()
        .map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    }),
  );
}
