// The turn's context, read from its owners (spec: "Conversation context"): memory retrieval over
// the three tiers (the memory module), the speaking character's state (already read with the
// speaker), the player's quests and relationships (characters), the inventory, and, when the
// routed protocol grants it, the system's figures and what observers see. Every read that does not
// depend on routing starts at once and side by side; the protocol's reach and the token budget are
// applied by fitContext (chat.context.rules.ts).
import type { UserPrincipal } from '../../platform/http/auth.js';
import { readableInTurn } from '../memory/index.js';
import type { RoutingOutcome } from '../protocols/index.js';
import {
  RETRIEVAL_TIERS,
  fitContext,
  type FittedContext,
  type GatheredContext,
  type ProtocolContext,
} from './chat.context.rules.js';
import type { ChatServiceDeps, Prepared, TurnCast } from './chat.types.js';

export type ContextDeps = Pick<ChatServiceDeps, 'memory' | 'characters' | 'inventory' | 'knowledge'>;

export class TurnContextReader {
  constructor(
    private readonly d: ContextDeps,
    private readonly budgetTokens: number,
  ) {}

  /** Starts (once per turn) every read of the context: retrieval begins its full-text side once
   * the speakers' reach is known and its vector side when the query's embedding arrives (neither
   * waits for routing); the system knowledge waits for routing, as only its capabilities say
   * whether to read it. */
  start(
    prepared: Prepared,
    user: Pick<UserPrincipal, 'id' | 'name'>,
    cast: TurnCast,
    text: string,
    conversationId: number | undefined,
  ): Promise<GatheredContext> {
    if (prepared.context) return prepared.context;
    const lead = cast.speakers.then((s) => s[0]!);
    const npcInfo = lead.then((s) => ({ name: s.name, description: s.description, assistant_user_id: s.id }));
    // Awaited once retrieval is done; a bad speaker fails the turn where it is read.
    npcInfo.catch(() => undefined);
    const knowledge = prepared.routing.then(({ resolved: { capabilities } }) =>
      Promise.all([
        capabilities.adminAccess ? this.d.knowledge.admin() : undefined,
        capabilities.observer ? this.d.knowledge.observer() : undefined,
      ]),
    );
    knowledge.catch(() => undefined);
    // Each speaker's own memories; of the player's, only what the speakers may know (the reach).
    const memory = Promise.all([cast.ids, cast.reach]).then(([ids, conversationIds]) =>
      this.d.memory.gatherContext(user.id, ids[0]!, text, conversationId, {
        queryEmbedding: prepared.queryEmbedding,
        npcInfo,
        perTier: RETRIEVAL_TIERS,
        npcUserIds: ids,
        conversationIds,
      }),
    );
    prepared.context = Promise.all([
      memory,
      cast.ids.then((ids) => this.d.characters.playerContext(user.id, ids[0]!)),
      this.d.inventory.inventory(user.id),
      cast.speakers,
      knowledge,
    ]).then(([memory, player, inventory, [speaker, ...others], [system, observers]]) => ({
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
    }));
    prepared.context.catch(() => undefined);
    return prepared.context;
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
