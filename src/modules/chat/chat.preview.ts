// The admin prompt preview (`POST /api/admin/prompts/preview`): what a chat turn of a user would
// send now, composed by the turn's own code (ModelTurn.prompt), with nothing sent or stored.
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import type { ConversationContext } from '../memory/index.js';
import type { ChatSpeakers } from './chat.speakers.js';
import type { ModelTurn } from './chat.model-turn.js';
import * as repo from './conversations.repository.js';
import type {
  ChatServiceDeps,
  ChatServiceOptions,
  PromptPreview,
  PromptPreviewInput,
  Speaker,
} from './chat.types.js';

/** The context the preview shows beside the prompt (the memories are listed on their own). */
const shown = ({ playerState, playerQuests, playerInventory, systemWideKnowledge }: ConversationContext) => ({
  playerState,
  playerQuests,
  playerInventory,
  systemWideKnowledge,
});

/** The user's conversation by id (or their default one), refused when it is not theirs. */
async function conversationOf(d: ChatServiceDeps, userId: number, conversationId: number | undefined) {
  const conversation = await d.conversations.peek(userId, conversationId);
  if (conversationId !== undefined && !conversation)
    throw validationFailed([{ path: 'conversationId', message: `not a conversation of user ${userId}` }]);
  return conversation;
}

/** The admin prompt preview: the system prompt, tools and retrieved memories a turn of this
 * user would use now, through the turn's own composition (ModelTurn.prompt): the same routing,
 * speakers, context and ground floor. No chat call; nothing stored (the query is embedded alone,
 * claiming no pending chunks; the persona session is read, not touched; a missing default
 * conversation is not created). */
export async function previewPrompt(
  d: ChatServiceDeps,
  speakersOf: ChatSpeakers,
  modelTurn: ModelTurn,
  opts: Pick<ChatServiceOptions, 'historyMessages'>,
  input: PromptPreviewInput,
): Promise<PromptPreview> {
  const user = await d.users.identity(input.userId);
  if (!user) throw notFound('user');
  const text = input.message?.trim() ?? '';
  const persona = input.personaSessionId
    ? await d.personas.forTurn(user.id, input.personaSessionId, { touch: false })
    : undefined;
  if (input.personaSessionId && !persona)
    throw validationFailed([
      { path: 'personaSessionId', message: `not a persona session of user ${user.id}` },
    ]);
  if (persona && input.npcUserId !== undefined)
    throw validationFailed([
      { path: 'npcUserId', message: 'a persona session is answered by its persona alone' },
    ]);
  if (input.direct && (input.npcUserId === undefined || input.conversationId !== undefined || persona))
    throw validationFailed([
      {
        path: 'direct',
        message: 'a direct turn names its character (npcUserId) and no conversation or persona session',
      },
    ]);
  const named = input.direct
    ? undefined
    : await conversationOf(d, user.id, persona?.conversationId ?? input.conversationId);
  let speakers: Speaker[];
  try {
    speakers = input.direct
      ? await speakersOf.speakersFor([], input.npcUserId, true)
      : await speakersOf.cast(named?.npc_user_ids ?? [], input.npcUserId, text);
  } catch (err) {
    // The turn's refusal names chatMessage.npcUserId; here the field is the body's.
    if (err instanceof AppError && err.code === 'validation_failed')
      throw validationFailed([{ path: 'npcUserId', message: err.message }]);
    throw err;
  }
  // A direct message's turn runs in the player's own thread with the character (none yet: the turn
  // would make it).
  const lead = speakers[0]!;
  const conversation = !input.direct
    ? named
    : lead.isAssistant
      ? await d.conversations.peek(user.id, undefined)
      : await d.conversations.peekDirect(user.id, lead.id);
  if (persona) speakers = speakers.map((s) => ({ ...s, name: persona.persona }));
  const routing = await d.protocols.routeUser(user.id, {
    channelId: input.channelId,
    ...(persona ? { personaType: persona.personaType } : {}),
  });
  const cast = await speakersOf.turnCast(user.id, speakers);
  const history = conversation ? await repo.history(d.db, conversation.id, opts.historyMessages) : [];
  const composed = await modelTurn.prompt({
    user,
    conversationId: conversation?.id ?? null,
    text,
    prefs: input.preferences,
    cast,
    routing,
    channelId: input.channelId,
    // The query alone (no pending chunks claimed, nothing to store); no message, no query.
    queryEmbedding: text ? d.memory.embedQueryBatched(text, 0).embedding : Promise.resolve(undefined),
    history,
    // A preview has no message, so no attached documents.
    documents: [],
  });
  // Whose each memory is: the player's, a speaker's, or (the world tier) whoever wrote it.
  const owners = new Map(
    [...(await d.users.identities([...new Set(composed.context.memories.map((m) => m.userId))]))].map(
      ([id, u]) => [id, u.name],
    ),
  );
  return {
    userId: user.id,
    npcUserId: composed.group ? null : composed.lead.id,
    protocolId: routing.protocolId,
    protocol: routing.protocol,
    enforced: routing.enforced,
    reason: routing.reason,
    personaType: routing.personaType,
    system: composed.system,
    tools: composed.tools.map((t) => ({
      name: t.name,
      description: t.description,
      parameters: t.parameters ?? null,
    })),
    memories: composed.context.memories.map((m) => ({
      id: m.id,
      source: m.source,
      tier: m.tier,
      content: m.content,
      similarity: m.similarity,
      owner: owners.has(m.userId) ? { id: m.userId, name: owners.get(m.userId)! } : null,
    })),
    context: { ...shown(composed.context), dropped: composed.dropped },
  };
}
