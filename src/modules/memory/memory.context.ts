// Context gathering (spec: "Conversation context"): the three tiers retrieved in one hybrid
// search and laid out as the prompt's memory context.
import type { MemoryEmbedding } from './memory.embedding.js';
import type {
  ConversationContext,
  GatherOptions,
  MemoryAccounts,
  RetrievedMemory,
} from './memory.mapping.js';
import type { MemoryRetrieval } from './memory.retrieval.js';

/** The player, the NPC they speak to, the input, the conversation (boosts continuity). */
export type GatherArgs = [
  playerUserId: number,
  npcUserId: number,
  input: string,
  conversationId?: number,
  options?: GatherOptions,
];

/** What gathering needs: the query's embedding, retrieval, and who an account is. */
export interface ContextParts {
  embedQuery: MemoryEmbedding['embedQuery'];
  retrieve: MemoryRetrieval['retrieve'];
  identity: MemoryAccounts['identity'];
}

/** spec: "Conversation context", its memory side. Retrieval covers the three tiers (the player's
 * memories, the world, the NPC's core) in one hybrid search; the conversation id boosts
 * continuity. The player's state, quests and inventory belong to other modules: the chat turn
 * fills them from their owners (chat.context.ts), so they are left empty here. */
export async function gatherContext(
  parts: ContextParts,
  ...[playerUserId, npcUserId, input, conversationId, options = {}]: GatherArgs
): Promise<ConversationContext> {
  const per = { world: 4, assistant: 4, personal: 6, ...options.perTier };
  const speakers = options.npcUserIds ?? [npcUserId];
  // Not awaited: retrieval's full-text side starts while the embedding is made.
  const queryEmbedding = options.queryEmbedding ?? parts.embedQuery(input, { includePending: true });
  const memories = await parts.retrieve(
    { userId: playerUserId, npcUserIds: speakers, conversationIds: options.conversationIds },
    input,
    per.world + per.assistant * speakers.length + per.personal + 10,
    { conversationId, queryEmbedding, embed: false },
  );
  const world = memories.filter((m) => m.tier === 'world').slice(0, per.world);
  // Each speaker's own core memories, up to the tier's share each.
  const assistant = speakers.flatMap((id) =>
    memories.filter((m) => m.userId === id && m.tier === 'assistant_core').slice(0, per.assistant),
  );
  const personal = memories
    .filter((m) => m.userId === playerUserId && m.tier !== 'world')
    .slice(0, per.personal);
  const lines = (ms: RetrievedMemory[]) => ms.map((m) => `- ${m.content}`).join('\n');
  let npc = await options.npcInfo;
  if (!npc) {
    const u = await parts.identity(npcUserId);
    npc = { name: u?.name ?? '', description: '', assistant_user_id: npcUserId };
  }
  const used = new Set([...world, ...assistant, ...personal].map((m) => m.id));
  return {
    playerState: {},
    playerQuests: {},
    playerInventory: {},
    npcInfo: npc,
    memoryContext: {
      worldContext: lines(world),
      assistantContext: lines(assistant),
      personalContext: lines(personal),
    },
    memories: memories.filter((m) => used.has(m.id)),
  };
}
