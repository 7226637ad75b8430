// Who speaks in a turn: the conversation's characters (the lead first), read through the
// characters module, and how a stored reply is presented with its speaker's name.
import { AppError } from '../../platform/http/problem.js';
import type { CharactersService } from '../characters/index.js';
import { presentMessage, type ConversationsService, type MessageRow } from './conversations.service.js';
import type { Speaker, TurnCast } from './chat.types.js';
import { addressedSpeakers } from './chat.characters.rules.js';

export class ChatSpeakers {
  constructor(
    private readonly characters: CharactersService,
    private readonly conversations: Pick<ConversationsService, 'visibleTo'>,
    private readonly assistantName: string,
  ) {}

  /** Who answers a message: as `speakersFor`, and in a scene with no speaker asked for, the
   * characters the message names or addresses (all of them, for the director, when it names
   * none). */
  async cast(npcUserIds: number[], requested: number | undefined, text: string): Promise<Speaker[]> {
    const speakers = await this.speakersFor(npcUserIds, requested);
    if (speakers.length < 2) return speakers;
    const named = addressedSpeakers(text, speakers);
    return named.length > 0 ? named : speakers;
  }

  /** The speakers with what they may know of the player (`reach`). */
  async turnCast(playerId: number, speakers: Speaker[]): Promise<TurnCast> {
    return { speakers, reach: await this.reach(playerId, speakers) };
  }

  /** What the speakers may know of the player: undefined (everything) for the assistant's own
   * turn; otherwise the player's conversations every speaker took part in, and the pool of the
   * characters set to `shared` when every speaker is one (ConversationsService.visibleTo). */
  async reach(playerId: number, speakers: Speaker[]): Promise<number[] | undefined> {
    if (speakers.length === 1 && speakers[0]!.isAssistant) return undefined;
    const shared = speakers.every((s) => s.card?.playerMemory === 'shared');
    const pool = shared ? await this.characters.sharedMemoryCharacters() : undefined;
    return this.conversations.visibleTo(
      playerId,
      speakers.map((s) => s.id),
      pool,
    );
  }

  /** Who may answer: the named NPC (it must be in the conversation, or be the assistant), the
   * conversation's NPCs (group chat), or the assistant. */
  async speakersFor(npcUserIds: number[], requested: number | undefined, direct = false): Promise<Speaker[]> {
    if (requested === undefined && npcUserIds.length > 0)
      return Promise.all(npcUserIds.map((id) => this.speaker(id)));
    const lead = direct ? requested : await this.leadOf(npcUserIds, requested);
    if (lead === undefined)
      throw new AppError('validation_failed', 'That character is not part of this conversation', {
        errors: [{ path: 'chatMessage.npcUserId', message: 'not a character of this conversation' }],
      });
    return [await this.speaker(lead)];
  }

  /** The id of the speaker `speakersFor` puts first, without reading it (the rule it applies);
   * undefined for a request it refuses (the NPC is not part of the conversation). */
  async leadOf(npcUserIds: number[], requested: number | undefined): Promise<number | undefined> {
    const assistantId = await this.characters.assistantUserId();
    if (requested === undefined) return npcUserIds[0] ?? assistantId;
    return requested === assistantId || npcUserIds.includes(requested) ? requested : undefined;
  }

  async speaker(id: number): Promise<Speaker> {
    try {
      const { npc, state } = await this.characters.getNpcWithState(id);
      return {
        id,
        name: npc.name,
        description: npc.description,
        state,
        isAssistant: npc.isAssistant,
        card: {
          personality: npc.personality,
          speakingStyle: npc.speakingStyle,
          goals: npc.goals,
          playerMemory: npc.playerMemory,
          tools: npc.tools,
        },
      };
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found')
        throw new AppError('validation_failed', 'No such character', {
          errors: [{ path: 'npcUserId', message: `user ${id} is not a character` }],
        });
      throw err;
    }
  }

  /** A stored reply as an assistantResponse; `known` saves looking up the turn's own speakers. */
  async present(m: MessageRow, known: Speaker[] = []) {
    const p = presentMessage(m);
    const npcUserId = m.npc_user_id ?? (await this.characters.assistantUserId());
    const speaker =
      known.find((s) => s.id === npcUserId) ??
      (await this.speaker(npcUserId).catch(() => ({ name: this.assistantName })));
    return {
      conversationId: p.conversationId,
      messageId: p.id,
      npcUserId,
      npcName: speaker.name,
      text: p.text,
      createdAt: p.createdAt,
      ...usageOf(m),
      ...toolResultsOf(m),
    };
  }
}

/** The turn's token usage a reply's metadata records (the first reply of a turn). */
function usageOf(m: MessageRow): { usage?: { inputTokens: number; outputTokens: number } } {
  const u = (m.metadata as { usage?: { inputTokens?: unknown; outputTokens?: unknown } } | null)?.usage;
  return typeof u?.inputTokens === 'number' && typeof u.outputTokens === 'number'
    ? { usage: { inputTokens: u.inputTokens, outputTokens: u.outputTokens } }
    : {};
}

/** The tool results stored with a reply (its metadata's `tools`), for its assistantResponse. */
function toolResultsOf(m: MessageRow): { toolResults?: { name: string; result: unknown }[] } {
  const tools = (m.metadata as { tools?: unknown } | null)?.tools;
  return Array.isArray(tools) ? { toolResults: tools as { name: string; result: unknown }[] } : {};
}
