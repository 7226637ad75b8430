// The real-time chat turn as named stages (spec: "What the service does" 2, "Protocols and
// routing", "Conversation context", "Events", Errors 1, Limits "model calls per message"), each a
// method whose inputs and outputs are typed, called one after another:
//
// admit (validate, rate limit, the persona session, the conversation; a retried clientMessageId is
// answered again, never stored twice) → route (who answers, what they may know, the protocol) →
// store the user's message (with the history before it; images go to vision jobs, documents are
// read first and stored with it, chat.documents.ts) → assistantThinking → the answer's stages in
// ModelTurn (chat.model-turn.ts): prompt (the context read, the prompt composed), model, tools
// (only after a tool request) and the model again, store the replies → assistantResponse(s) →
// remember the exchange → assistantIdle. The query's embedding request is the one step that runs
// beside others (see `message`). A failure becomes chatError; the user's message stays stored
// (status failed) for a retry. Who speaks: ChatSpeakers; images: ChatAttachments; ChatService
// (chat.service.ts) is the facade that times each turn.
import { transaction } from '../../platform/db/database.js';
import { enqueueLater } from '../../platform/jobs/later.js';
import { AppError, parseOrThrow, toProblem, validationFailed } from '../../platform/http/problem.js';
import { enforceLimit } from '../../platform/http/rate-limit.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { ToolSpec } from '../../platform/models/provider.js';
import { chatMessageSchema, directNpcMessageSchema, type ChatMessageInput } from './chat.schemas.js';
import { VISION_JOB, type VisionJob } from './chat.jobs.js';
import * as repo from './conversations.repository.js';
import type { MessageRow } from './conversations.service.js';
import {
  type TurnEmitter,
  type ChatServiceDeps,
  type ChatServiceOptions,
  ChatTurnError,
  type Attachment,
  type Turn,
  type TurnCast,
  type Speaker,
  type TurnPersona,
  type PromptPreview,
  type PromptPreviewInput,
} from './chat.types.js';
import type { DirectNpcResponse } from './chat.events.js';
import { ChatSpeakers } from './chat.speakers.js';
import { ChatAttachments } from './chat.attachments.js';
import type { AttachedDocument } from './chat.documents.rules.js';
import { ModelTurn, type TurnStream } from './chat.model-turn.js';
import type { RoutingOutcome } from '../protocols/index.js';
import { previewPrompt } from './chat.preview.js';

/** The client's message id, even from a payload that fails validation, so chatError can name it. */
function clientMessageIdOf(raw: unknown): string | null {
  const id = (raw as { clientMessageId?: unknown } | null)?.clientMessageId;
  return typeof id === 'string' ? id : null;
}

/** A stored reply as a directNpcResponse. */
function directResponse(npc: Speaker, reply: MessageRow): DirectNpcResponse {
  return {
    npcUserId: npc.id,
    npcName: npc.name,
    messageId: reply.id,
    text: reply.text,
    createdAt: reply.created_at.toISOString(),
  };
}

/** The turns of one service: a chatMessage (the assistant, one NPC, or a group) and a
 * directNpcMessage. Each resolves with the ids for the ack, or throws ChatTurnError (already a
 * chatError payload). */
export class ChatTurns {
  private readonly speakers: ChatSpeakers;
  private readonly attachments: ChatAttachments;
  private readonly modelTurn: ModelTurn;

  constructor(
    private readonly d: ChatServiceDeps,
    private readonly opts: ChatServiceOptions,
  ) {
    this.speakers = new ChatSpeakers(d.characters, d.conversations, d.assistantName);
    this.attachments = new ChatAttachments(d, opts.attachmentTimeoutMs);
    this.modelTurn = new ModelTurn(d, opts);
  }

  /** The tools the model may be offered in a chat turn (each protocol allows a subset). */
  get toolSpecs(): ToolSpec[] {
    return this.modelTurn.specs;
  }

  /** A chatMessage, as its stages one after another: admit (the rate limit, the conversation,
   * a retry recognised), route (who answers and under which protocol), store (the user's message,
   * with the history before it), emit assistantThinking, then the answer's stages (chat.model-turn.ts:
   * prompt with the context, model, tools, model again after a tool request, store the replies),
   * emit the responses, remember the exchange, emit assistantIdle. */
  async message(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    const failed: FailedTurn = { conversationId: null, userMessage: undefined };
    try {
      const input = parseOrThrow(chatMessageSchema, raw, 'chatMessage');
      const { conversation, persona, existing } = await this.admit(user, input, failed);
      if (existing?.status === 'answered') {
        await this.replay(conversation.id, existing.id, emit, persona);
        return { conversationId: conversation.id, messageId: existing.id };
      }
      // spec: at most one embedding request per message (the query, batched with memories waiting
      // for theirs). Requested here and awaited by the context stage: the model server's answer is
      // the turn's longest wait, so it runs while the turn routes and stores its message. It never
      // rejects (a failed request retrieves by full text alone).
      const embedded = this.d.memory.embedQueryBatched(input.message);
      const { cast, routing } = await this.route(user, input, conversation, persona);
      const { images, documents } = await this.attachments.attachments(user.id, input);
      const stored = await this.storeMessage(user, input, conversation.id, existing, cast, images, documents);
      failed.userMessage = stored.message;
      emit.thinking({ conversationId: conversation.id });
      const turn: Turn = {
        user,
        conversationId: conversation.id,
        userMessage: stored.message,
        replyId: stored.replyId,
        history: stored.history,
        text: input.message,
        prefs: input.preferences,
        cast,
        routing,
        channelId: input.channelId,
        queryEmbedding: embedded.embedding,
        storeEmbeddings: embedded.store,
        documents,
        persona,
      };
      const { replies, prompt, planned } = await this.answer(turn, {
        stream: input.preferences?.stream !== false,
        emit,
      });
      for (const r of replies) emit.response(await this.speakers.present(r, cast.speakers));
      await this.modelTurn.remember(turn, prompt, planned);
      emit.idle({ conversationId: conversation.id });
      return { conversationId: conversation.id, messageId: stored.message.id };
    } catch (err) {
      await this.markFailed(failed.userMessage);
      if (failed.conversationId !== null) emit.idle({ conversationId: failed.conversationId });
      throw this.turnError(err, failed.conversationId, clientMessageIdOf(raw));
    }
  }

  /** A directNpcMessage: the named character answers alone, in the player's own thread with it
   * (the assistant's is the default conversation), through the same stages as a chatMessage. */
  async directNpcMessage(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    const failed: FailedTurn = { conversationId: null, userMessage: undefined };
    try {
      const input = parseOrThrow(directNpcMessageSchema, raw, 'directNpcMessage');
      await this.rateLimit(user.id);
      // Side by side for the reason the route stage gives: their reads share statements.
      const [[npc], routing] = await Promise.all([
        this.speakers.speakersFor([], input.npcUserId, true),
        this.routeUser(user),
      ]);
      const conversation = npc!.isAssistant
        ? await this.d.conversations.resolve(user.id, undefined)
        : await this.d.conversations.direct(user.id, npc!.id);
      failed.conversationId = conversation.id;
      const existing = await this.retried(user.id, input.clientMessageId, conversation.id);
      if (existing?.status === 'answered') {
        const [reply] = await repo.repliesTo(this.d.db, existing.id);
        if (reply) emit.directResponse(directResponse(npc!, reply));
        return { conversationId: conversation.id, messageId: existing.id };
      }
      const embedded = this.d.memory.embedQueryBatched(input.message);
      const cast = await this.speakers.turnCast(user.id, [npc!]);
      const stored = await this.storeMessage(
        user,
        { ...input, npcUserId: npc!.id },
        conversation.id,
        existing,
        cast,
        [],
        [],
      );
      failed.userMessage = stored.message;
      emit.npcThinking({ npcUserId: npc!.id });
      const turn: Turn = {
        user,
        conversationId: conversation.id,
        userMessage: stored.message,
        replyId: stored.replyId,
        history: stored.history,
        text: input.message,
        prefs: input.preferences,
        cast,
        routing,
        channelId: undefined,
        queryEmbedding: embedded.embedding,
        storeEmbeddings: embedded.store,
        documents: [],
      };
      const { replies, prompt, planned } = await this.answer(turn, { stream: false, emit: null });
      emit.directResponse(directResponse(npc!, replies[0]!));
      await this.modelTurn.remember(turn, prompt, planned);
      return { conversationId: conversation.id, messageId: stored.message.id };
    } catch (err) {
      await this.markFailed(failed.userMessage);
      throw this.turnError(err, failed.conversationId, clientMessageIdOf(raw));
    }
  }

  /** The answer's stages: the prompt (with the context), the model, the tools it asked for and
   * the model again after them, the replies stored. */
  private async answer(turn: Turn, out: TurnStream) {
    const prompt = await this.modelTurn.prompt(turn);
    const deltas = this.modelTurn.deltas(turn, out);
    const stream = { ...out, onDelta: deltas.push };
    const first = await this.modelTurn.model(turn, prompt, stream);
    const ran = await this.modelTurn.tools(turn, prompt, first);
    const answers = ran.length
      ? [first, await this.modelTurn.model(turn, prompt, stream, { answer: first, ran })]
      : [first];
    deltas.flush();
    const { replies, planned } = await this.modelTurn.store(turn, prompt, answers, ran);
    return { replies, prompt, planned };
  }

  /** The admin prompt preview (chat.preview.ts), through this turn's own parts. */
  preview(input: PromptPreviewInput): Promise<PromptPreview> {
    return previewPrompt(this.d, this.speakers, this.modelTurn, this.opts, input);
  }

  /** A retried message already answered: its stored replies sent again, without a model call. */
  private async replay(
    conversationId: number,
    messageId: number,
    emit: TurnEmitter,
    persona: TurnPersona | undefined,
  ) {
    emit.thinking({ conversationId });
    for (const reply of await repo.repliesTo(this.d.db, messageId)) {
      const presented = await this.speakers.present(reply);
      emit.response(persona ? { ...presented, npcName: persona.persona } : presented);
    }
    emit.idle({ conversationId });
  }

  /** `chatMessage.personaSessionId`: the caller's session, else 400; the turn runs in its
   * conversation (another `conversationId` → 400) with the assistant as the persona (any
   * `npcUserId` → 400). */
  private async personaOf(userId: number, input: ChatMessageInput): Promise<TurnPersona> {
    if (input.npcUserId !== undefined)
      throw validationFailed([
        { path: 'chatMessage.npcUserId', message: 'a persona session is answered by its persona alone' },
      ]);
    const persona = await this.d.personas.forTurn(userId, input.personaSessionId!);
    if (!persona)
      throw validationFailed([
        { path: 'chatMessage.personaSessionId', message: 'not one of your persona sessions' },
      ]);
    if (input.conversationId !== undefined && input.conversationId !== persona.conversationId)
      throw validationFailed([
        {
          path: 'chatMessage.conversationId',
          message: `the persona session runs in its own conversation (${persona.conversationId})`,
        },
      ]);
    return persona;
  }

  /** A failed turn's message is kept, marked failed, for a retry with its clientMessageId. */
  private async markFailed(userMessage: MessageRow | undefined) {
    if (!userMessage) return;
    try {
      await repo.setMessageStatus(this.d.db, userMessage.id, 'failed');
    } catch (err) {
      // The turn's own failure is what the client is told; a message left `received` is retried
      // with its clientMessageId just the same.
      this.d.log.warn({ err }, 'marking a failed chat message failed');
    }
  }

  private turnError(
    err: unknown,
    conversationId: number | null,
    clientMessageId: string | null,
  ): ChatTurnError {
    if (err instanceof ChatTurnError) return err;
    const problem = toProblem(err);
    if (problem.code === 'internal') this.d.log.error({ err }, 'chat turn failed');
    return new ChatTurnError({ ...problem, conversationId, clientMessageId }, err);
  }

  private rateLimit(userId: number) {
    return enforceLimit(
      this.d.counters,
      `chat:${userId}`,
      this.opts.messagesPerMinute,
      60_000,
      'messages a minute',
    );
  }

  /** The admit stage: the rate limit first (every message counts, refused or not); then the
   * persona session, the conversation and a retry of a message already stored, each read after
   * the other. A refused message's chatError names its conversation when it is the caller's. */
  private async admit(user: UserPrincipal, input: ChatMessageInput, failed: FailedTurn) {
    try {
      await this.rateLimit(user.id);
    } catch (err) {
      failed.conversationId = await this.conversationNamed(user.id, input);
      throw err;
    }
    // A persona session's conversation and routing persona type are the server's record, never
    // the client's.
    const persona = input.personaSessionId ? await this.personaOf(user.id, input) : undefined;
    const conversation = await this.d.conversations.resolve(
      user.id,
      persona?.conversationId ?? input.conversationId,
    );
    failed.conversationId = conversation.id;
    const existing = await this.retried(user.id, input.clientMessageId, conversation.id);
    return { conversation, persona, existing };
  }

  /** The conversation a refused message names: the caller's own (read only, nothing created). */
  private async conversationNamed(userId: number, input: ChatMessageInput): Promise<number | null> {
    const persona = input.personaSessionId
      ? await this.d.personas.forTurn(userId, input.personaSessionId, { touch: false })
      : undefined;
    const named = await this.d.conversations.peek(userId, persona?.conversationId ?? input.conversationId);
    return named?.id ?? null;
  }

  /** A message already stored with this clientMessageId (never stored twice), or undefined; one
   * of another conversation is a conflict. */
  private async retried(userId: number, clientMessageId: string | undefined, conversationId: number) {
    if (!clientMessageId) return undefined;
    const existing = await repo.findByClientMessageId(this.d.db, userId, clientMessageId);
    if (existing && existing.conversation_id !== conversationId)
      throw new AppError('conflict', 'This clientMessageId belongs to another conversation');
    return existing;
  }

  /** The route stage: who answers (the conversation's characters, the one asked for, or the
   * assistant; in a persona session the assistant as the persona), what they may know of the
   * player, and the protocol the caller is routed to. */
  private async route(
    user: UserPrincipal,
    input: ChatMessageInput,
    conversation: { npc_user_ids: number[] },
    persona: TurnPersona | undefined,
  ): Promise<{ cast: TurnCast; routing: RoutingOutcome }> {
    // Side by side: both read character profiles and users' rows, and reads made together share
    // one statement (batchedByKey), so routing costs the turn no statements of its own there.
    const [answering, routing] = await Promise.all([
      this.speakers.cast(conversation.npc_user_ids, input.npcUserId, input.message),
      this.routeUser(user, input.channelId, persona),
    ]);
    const speakers = persona ? answering.map((s) => ({ ...s, name: persona.persona })) : answering;
    const cast = await this.speakers.turnCast(user.id, speakers);
    return { cast, routing };
  }

  /** Routing (protocols): the channel the turn comes from is its step 2 (`chatMessage.channelId`);
   * a persona session's routing takes the session's persona type. */
  private routeUser(user: UserPrincipal, channelId?: string, persona?: TurnPersona) {
    return this.d.protocols.routeUser(user.id, {
      channelId,
      // Only the chat-platform adapter's turns (chat-platform.chat.ts) come from the channel for a
      // linked account; a client's channelId gives the channel's wording, not its reach.
      channelLinked: user.sid === undefined && user.jti.startsWith('chat-platform:'),
      ...(persona && { personaType: persona.personaType }),
    });
  }

  /** The store stage of the user's message: stored (`received`) with the id its reply takes and the
   * history before it, in one statement; with the vision jobs of its images and its documents'
   * memories in the same transaction. A retried message is the stored row (neither stored again);
   * its history is read before its id. */
  private async storeMessage(
    user: UserPrincipal,
    input: { message: string; clientMessageId?: string | undefined; npcUserId?: number | undefined },
    conversationId: number,
    existing: MessageRow | undefined,
    cast: TurnCast,
    images: Attachment[],
    docs: AttachedDocument[],
  ): Promise<{ message: MessageRow; replyId: number | null; history: MessageRow[] }> {
    const limit = this.opts.historyMessages;
    const group = cast.speakers.length > 1;
    if (existing) {
      const history = await repo.history(this.d.db, conversationId, limit, existing.id);
      const replyId = group ? null : await repo.reserveMessageId(this.d.db);
      return { message: existing, replyId, history };
    }
    const m: repo.NewMessage = {
      conversationId,
      userId: user.id,
      role: 'user',
      text: input.message,
      clientMessageId: input.clientMessageId ?? null,
      status: 'received',
      ...(input.npcUserId ? { npcUserId: input.npcUserId } : {}),
    };
    const stored =
      images.length + docs.length === 0
        ? await repo.insertMessageWithHistory(this.d.db, m, limit)
        : await transaction(this.d.db, async (uow) => {
            const s = await repo.insertMessageWithHistory(uow.trx, m, limit);
            // spec: one vision call per attached image, in the background, linked to the
            // conversation: the unit's jobs, enqueued with its other writes at commit.
            for (const a of images)
              void enqueueLater(uow, VISION_JOB, {
                userId: user.id,
                conversationId,
                messageId: s.message.id,
                image: a.job,
              } satisfies VisionJob);
            await this.attachments.documents.store(uow, docs, { ...m, messageId: s.message.id });
            return s;
          });
    return { message: stored.message, replyId: group ? null : stored.replyId, history: stored.history };
  }
}

/** What a failed turn's chatError and cleanup need: the conversation once known, the user's
 * message once stored (marked failed for a retry). */
interface FailedTurn {
  conversationId: number | null;
  userMessage: MessageRow | undefined;
}
