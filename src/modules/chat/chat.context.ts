// The turn's context, read from its owners (spec: "Conversation context"): memory retrieval over
// the three tiers (the memory module), the speaking character's state (already read with the
// speaker), the player's quests and relationships (characters), the inventory, and, when the
// routed protocol grants it, the system's figures and what observers see, read side by side; the
// protocol's reach and the token budget are applied by fitContext (chat.context.rules.ts).
import { readableInTurn } from '../memory/index.js';
import type { RoutingOutcome } from '../protocols/index.js';
import {
  RETRIEVAL_TIERS,
  fitContext,
  type FittedContext,
  type GatheredContext,
  type ProtocolContext,
} from './chat.context.rules.js';
import type { ChatServiceDeps, PromptRequest } from './chat.types.js';

/** What the context stage reads by: who speaks, to whom, routed where, about what. */
export type ContextRequest = Pick<
  PromptRequest,
  'user' | 'conversationId' | 'cast' | 'routing' | 'text' | 'queryEmbedding'
>;

export type ContextDeps = Pick<ChatServiceDeps, 'memory' | 'characters' | 'inventory' | 'knowledge'>;

export class TurnContextReader {
  constructor(
    private readonly d: ContextDeps,
    private readonly budgetTokens: number,
  ) {}

  /** The context stage: every read of the context, side by side, as they have different owners
   * and the prompt waits for all of them. Retrieval's full-text side starts at once, its vector
   * side when the query's embedding arrives; the system knowledge is read only when the routed
   * protocol's capabilities ask for it. */
  async read(req: ContextRequest): Promise<GatheredContext> {
    const { user, cast, routing, text } = req;
    const [speaker, ...others] = cast.speakers;
    const { capabilities } = routing.resolved;
    const [memory, player, inventory, system, observers] = await Promise.all([
      // Each speaker's own memories; of the player's, only what the speakers may know (the reach).
      this.d.memory.gatherContext(user.id, speaker!.id, text, req.conversationId ?? undefined, {
        queryEmbedding: req.queryEmbedding,
        npcInfo: { name: speaker!.name, description: speaker!.description, assistant_user_id: speaker!.id },
        perTier: RETRIEVAL_TIERS,
        npcUserIds: cast.speakers.map((s) => s.id),
        conversationIds: cast.reach,
      }),
      this.d.characters.playerContext(user.id, speaker!.id),
      this.d.inventory.inventory(user.id),
      capabilities.adminAccess ? this.d.knowledge.admin() : undefined,
      capabilities.observer ? this.d.knowledge.observer() : undefined,
    ]);
    return {
      playerUserId: user.id,
      playerName: user.name,
      npc: memory.npcInfo,
      memories: memory.memories,
      speakerState: speaker!.state,
      otherSpeakers: others.map((s) => ({ name: s.name, emotions: s.state?.emotions ?? {} })),
      relationships: player.relationships,
      quests: player.quests,
      inventory: { items: inventory.items, energyCoins: inventory.energy_coins },
      system,
      observers,
    };
  }

  /** The context as the routed protocol may see it, within the budget. */
  fit(
    gathered: GatheredContext,
    routing: RoutingOutcome,
    speakerIds: number[],
    from: Pick<ProtocolContext, 'channelId' | 'clientType'>,
  ): FittedContext {
    return fitContext(
      // Observers' reflections quote every user: only a SYSTEM turn reads them.
      { ...gathered, memories: gathered.memories.filter((m) => readableInTurn(m, routing.reach)) },
      {
        protocolId: routing.protocolId,
        category: routing.protocol,
        enforced: routing.enforced,
        capabilities: routing.resolved.capabilities,
        ...(from.channelId ? { channelId: from.channelId } : {}),
        ...(from.clientType ? { clientType: from.clientType } : {}),
      },
      this.budgetTokens,
      speakerIds,
    );
  }
}
