// The real-time chat turn, orchestrated (spec: "What the service does" 2, "Protocols and routing",
// "Conversation context", "Events", Errors 1, Limits "model calls per message").
//
// chatMessage: validate → rate limit → store the user's message (a retried clientMessageId is
// answered again, never stored twice) → assistantThinking → route and compose the protocol →
// one embedding request (the query, batched with memories waiting for theirs) → gather context →
// model call 1 with tools → run the tools as the director over this player only → model call 2
// (only after a tool request) → store and emit assistantResponse(s) → assistantIdle. Images go to
// vision jobs; documents are read first and stored with the message (chat.documents.ts).
// A failure becomes chatError; the user's message stays stored (status failed) for a retry.
// The model's part is ModelTurn (chat.model-turn.ts); who speaks, ChatSpeakers; images,
// ChatAttachments. ChatService (chat.service.ts) is the facade that times each turn.
import { transaction } from '../../platform/db/database.js';
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
  type Prepared,
  type Attachment,
  type Turn,
  type Speaker,
  type TurnPersona,
  type PromptPreview,
  type PromptPreviewInput,
} from './chat.types.js';
import type { DirectNpcResponse } from './chat.events.js';
import { ChatSpeakers } from './chat.speakers.js';
import { ChatAttachments } from './chat.attachments.js';
import type { AttachedDocument } from './chat.documents.rules.js';
import { ModelTurn } from './chat.model-turn.js';
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
    this.modelTurn = new ModelTurn(d, opts, this.speakers);
  }

  /** The tools the model may be offered in a chat turn (each protocol allows a subset). */
  get toolSpecs(): ToolSpec[] {
    return this.modelTurn.specs;
  }

  async message(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    const clientMessageId = clientMessageIdOf(raw);
    let conversationId: number | null = null;
    let userMessage: MessageRow | undefined;
    try {
      const input = parseOrThrow(chatMessageSchema, raw, 'chatMessage');
      // The reads the turn needs first run beside the rate-limit hit (the conversation, the pending
      // chunks' read); nothing is written or sent before it passed. The query's embedding is
      // requested as soon as it passed: the turn's longest chain is that request, then retrieval.
      // A persona session's turn first reads the session: its conversation and routing persona
      // type are the server's record, never the client's.
      const limited = this.rateLimit(user.id);
      const personaRead = input.personaSessionId ? this.personaOf(user.id, input) : undefined;
      personaRead?.catch(() => undefined);
      const prepared = this.prepare(user, input.message, limited, personaRead, input.channelId);
      const conversationRead = personaRead
        ? personaRead.then((p) => this.d.conversations.resolve(user.id, p.conversationId))
        : this.d.conversations.resolve(user.id, input.conversationId);
      const [, conversation, existing, persona] = await Promise.all([
        limited,
        conversationRead,
        input.clientMessageId
          ? repo.findByClientMessageId(this.d.db, user.id, input.clientMessageId)
          : undefined,
        personaRead,
      ]).catch(async (err: unknown) => {
        // A refused message's chatError still names its conversation when it is the caller's.
        conversationId = (await conversationRead.catch(() => null))?.id ?? null;
        throw err;
      });
      conversationId = conversation.id;

      // A retry of a message already stored: answer it again, or finish it; never store it twice.
      if (existing) {
        if (existing.conversation_id !== conversation.id)
          throw new AppError('conflict', 'This clientMessageId belongs to another conversation');
        if (existing.status === 'answered') {
          await this.replay(conversation.id, existing.id, emit, persona);
          return { conversationId: conversation.id, messageId: existing.id };
        }
        userMessage = existing;
      }

      // The history before this message, read while it is being stored: one row more than the
      // turn sends, as the message may already be committed when the read runs (answer() keeps
      // the rows before it). A retried message's history is read before its id.
      prepared.history = repo.history(
        this.d.db,
        conversation.id,
        this.opts.historyMessages + 1,
        userMessage?.id,
      );
      prepared.history.catch(() => undefined);
      // Retrieval starts now: at once for the assistant's own turn, once the speakers are read for a
      // character's (who is addressed, and what each may know of the player) and goes on while the
      // message is stored (answer() awaits it; a failure surfaces there or, for a bad speaker, just
      // below). A persona session's conversation has no characters: the assistant answers, as the
      // persona.
      const speakersRead = this.speakers
        .cast(conversation.npc_user_ids, input.npcUserId, input.message)
        .then((list) => (persona ? list.map((s) => ({ ...s, name: persona.persona })) : list));
      const cast = await this.speakers.turnCast(
        user.id,
        conversation.npc_user_ids,
        input.npcUserId,
        speakersRead,
      );
      if (cast) void this.modelTurn.startContext(prepared, user, cast, input.message, conversation.id);
      const [speakers, { images, documents }] = await Promise.all([
        speakersRead,
        this.attachments.attachments(user.id, input),
      ]);
      prepared.documents = Promise.resolve(documents);

      if (!userMessage) {
        const stored = await this.storeUserMessage(
          {
            conversationId: conversation.id,
            userId: user.id,
            role: 'user',
            text: input.message,
            clientMessageId: input.clientMessageId ?? null,
            status: 'received',
            ...(input.npcUserId ? { npcUserId: input.npcUserId } : {}),
          },
          images,
          documents,
        );
        userMessage = stored.message;
        prepared.replyId = stored.replyId;
      }

      emit.thinking({ conversationId: conversation.id });
      await this.runTurn(
        {
          user,
          conversationId: conversation.id,
          userMessage,
          text: input.message,
          prefs: input.preferences,
          speakers,
          prepared,
          persona,
        },
        emit,
      );
      emit.idle({ conversationId: conversation.id });
      return { conversationId: conversation.id, messageId: userMessage.id };
    } catch (err) {
      await this.markFailed(userMessage);
      if (conversationId !== null) emit.idle({ conversationId });
      throw this.turnError(err, conversationId, clientMessageId);
    }
  }

  async directNpcMessage(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    let conversationId: number | null = null;
    let userMessage: MessageRow | undefined;
    try {
      const input = parseOrThrow(directNpcMessageSchema, raw, 'directNpcMessage');
      await this.rateLimit(user.id);
      const [npc] = await this.speakers.speakersFor([], input.npcUserId, true);
      // The player's own thread with the character (the assistant's is the default conversation).
      const conversation = npc!.isAssistant
        ? await this.d.conversations.resolve(user.id, undefined)
        : await this.d.conversations.direct(user.id, npc!.id);
      conversationId = conversation.id;
      if (input.clientMessageId) {
        const existing = await repo.findByClientMessageId(this.d.db, user.id, input.clientMessageId);
        if (existing && existing.conversation_id !== conversation.id)
          throw new AppError('conflict', 'This clientMessageId belongs to another conversation');
        if (existing?.status === 'answered') {
          const [reply] = await repo.repliesTo(this.d.db, existing.id);
          if (reply) emit.directResponse(directResponse(npc!, reply));
          return { conversationId: conversation.id, messageId: existing.id };
        }
        userMessage = existing;
      }
      userMessage ??= await repo.insertMessage(this.d.db, {
        conversationId: conversation.id,
        userId: user.id,
        role: 'user',
        text: input.message,
        npcUserId: npc!.id,
        clientMessageId: input.clientMessageId ?? null,
        status: 'received',
      });
      emit.npcThinking({ npcUserId: npc!.id });
      const { replies, finish } = await this.modelTurn.answer(
        {
          user,
          conversationId: conversation.id,
          userMessage,
          text: input.message,
          prefs: input.preferences,
          speakers: [npc!],
          prepared: this.prepare(user, input.message),
        },
        { stream: false, emit: null },
      );
      emit.directResponse(directResponse(npc!, replies[0]!));
      await finish();
      return { conversationId: conversation.id, messageId: userMessage.id };
    } catch (err) {
      await this.markFailed(userMessage);
      throw this.turnError(err, conversationId, clientMessageIdOf(raw));
    }
  }

  /** The admin prompt preview (chat.preview.ts), through this turn's own parts. */
  preview(input: PromptPreviewInput): Promise<PromptPreview> {
    return previewPrompt(this.d, this.speakers, this.modelTurn, input);
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
    if (userMessage) await repo.setMessageStatus(this.d.db, userMessage.id, 'failed').catch(() => undefined);
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

  private prepare(
    user: UserPrincipal,
    text: string,
    gate?: Promise<unknown>,
    persona?: Promise<TurnPersona>,
    channelId?: string,
  ): Prepared {
    // spec: at most one embedding request per message: the query, batched with pending memories.
    const embedded = this.d.memory.embedQueryBatched(text, undefined, gate);
    const prepared: Prepared = {
      // After the rate limit passed (it is needed only to compose the prompt): a turn's first
      // statements are the ones its embedding request waits for, and a refused message costs no
      // routing reads. A persona session's routing takes the session's persona type; the channel
      // the turn comes from is routing's step 2 (`chatMessage.channelId`).
      routing: Promise.all([gate, persona]).then(([, p]) =>
        this.d.protocols.routeUser(user.id, {
          channelId,
          // Only the chat-platform adapter's turns (chat-platform.chat.ts) come from the channel
          // for a linked account; a client's channelId gives the channel's wording, not its reach.
          channelLinked: user.sid === undefined && user.jti.startsWith('chat-platform:'),
          ...(p && { personaType: p.personaType }),
        }),
      ),
      queryEmbedding: embedded.embedding,
      storeEmbeddings: embedded.store,
      channelId,
    };
    // A turn that fails before it awaits these must not leave a rejection unhandled; awaiting them
    // later still throws.
    prepared.routing.catch(() => undefined);
    prepared.queryEmbedding.catch(() => undefined);
    return prepared;
  }

  /** The user's message, with the vision jobs of its images and its documents' memories in the
   * same transaction (a retry finds the message stored, and stores neither again). */
  private async storeUserMessage(m: repo.NewMessage, attachments: Attachment[], docs: AttachedDocument[]) {
    if (attachments.length + docs.length === 0) return repo.insertMessageReservingReply(this.d.db, m);
    return transaction(this.d.db, async (uow) => {
      const { trx } = uow;
      const stored = await repo.insertMessageReservingReply(trx, m);
      // spec: one vision call per attached image, in the background, linked to the conversation.
      for (const a of attachments)
        await this.d.jobs.enqueue(trx, VISION_JOB, {
          userId: m.userId,
          conversationId: m.conversationId,
          messageId: stored.message.id,
          image: a.job,
        } satisfies VisionJob);
      await this.attachments.documents.store(uow, docs, { ...m, messageId: stored.message.id });
      return stored;
    });
  }

  /** Answers the turn: the model's part, then each reply sent, then the exchange's memory. */
  private async runTurn(turn: Turn, emit: TurnEmitter) {
    const { replies, finish } = await this.modelTurn.answer(turn, {
      stream: turn.prefs?.stream !== false,
      emit,
    });
    for (const r of replies) emit.response(await this.speakers.present(r, turn.speakers));
    await finish();
  }
}
