// The real-time chat turn (spec: "What the service does" 2, "Protocols and routing",
// "Conversation context", "Events", Errors 1, Limits "model calls per message").
//
// chatMessage: validate → rate limit → store the user's message (a retried clientMessageId is
// answered again, never stored twice) → assistantThinking → route and compose the protocol →
// one embedding request (the query, batched with memories waiting for theirs) → gather context →
// model call 1 with tools → run the tools as the director over this player only → model call 2
// (only after a tool request) → store and emit assistantResponse(s) → assistantIdle. Images go to
// the background: one vision call each, stored as vision_analysis memories of the conversation.
// A failure becomes chatError; the user's message stays stored (status failed) for a retry.
import type { Logger } from 'pino';
import { type Db, transaction } from '../../platform/db/database.js';
import { AppError, parseOrThrow, toProblem, type Problem } from '../../platform/http/problem.js';
import { enforceLimit, type CounterStore } from '../../platform/http/rate-limit.js';
import { vetUrl, SafeFetchError } from '../../platform/http/safe-fetch.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { withModelTime, type ModelGateway } from '../../platform/models/gateway.js';
import type { Metrics } from '../../platform/http/metrics.js';
import type { ChatMessage as ModelMessage, ChatResult, ToolSpec } from '../../platform/models/provider.js';
import type { FilesService } from '../files/index.js';
import type { InventoryService } from '../inventory/index.js';
import type { ConversationContext, MemoryService } from '../memory/index.js';
import type { ProtocolsService } from '../protocols/index.js';
import { composeSystemPrompt } from '../protocols/index.js';
import type { CharactersService } from '../characters/index.js';
import {
  CHOICES_INSTRUCTION,
  ChoicesFilter,
  chatMessageSchema,
  decodeBase64Image,
  directNpcMessageSchema,
  directorInstruction,
  extractChoices,
  lengthInstruction,
  MAX_IMAGE_BYTES,
  maxTokensFor,
  parseDirectorReply,
  type ChatMessageInput,
  type Npc,
} from './chat.rules.js';
import type { UserPreferences } from './chat.schemas.js';
import { chatTools, runToolCalls, toolSpecs, type ChatTool } from './chat.tools.js';
import { VISION_JOB, type VisionJob } from './chat.jobs.js';
import * as repo from './conversations.repository.js';
import { presentMessage, type ConversationsService, type MessageRow } from './conversations.service.js';

/** What a turn sends to the client; the socket layer maps these to events. */
export interface TurnEmitter {
  thinking(e: { conversationId: number }): void;
  delta(e: { conversationId: number; messageId: number; delta: string }): void;
  response(e: {
    conversationId: number;
    messageId: number;
    npcUserId: number;
    npcName: string;
    text: string;
    createdAt: string;
  }): void;
  idle(e: { conversationId: number }): void;
  npcThinking(e: { npcUserId: number }): void;
  directResponse(e: {
    npcUserId: number;
    npcName: string;
    messageId: number;
    text: string;
    createdAt: string;
  }): void;
}

export interface ChatServiceOptions {
  messagesPerMinute: number;
  toolCallsPerTurn: number;
  historyMessages: number;
  attachmentTimeoutMs: number;
}

export interface ChatServiceDeps {
  db: Db;
  log: Logger;
  counters: CounterStore;
  jobs: JobQueue;
  models: ModelGateway;
  memory: MemoryService;
  inventory: InventoryService;
  protocols: ProtocolsService;
  characters: CharactersService;
  conversations: ConversationsService;
  files: FilesService;
  metrics: Pick<Metrics, 'chatTurn'>;
  assistantName: string;
}

/** chatError payload: the problem plus the ids the client needs to match it to its message. */
export type ChatErrorPayload = Problem & { conversationId: number | null; clientMessageId: string | null };

export class ChatTurnError extends Error {
  constructor(
    public readonly problem: ChatErrorPayload,
    cause: unknown,
  ) {
    super(problem.detail, { cause });
  }
}

interface Speaker {
  id: number;
  name: string;
  description: string;
  emotions?: unknown;
}

/** What a turn can start as soon as it knows the user and the text: routing and the query
 * embedding run while the turn stores the message. */
interface Prepared {
  routing: ReturnType<ProtocolsService['routeUser']>;
  queryEmbedding: Promise<number[] | undefined>;
  /** Stores the pending memories embedded with the query (once the reply is sent; never rejects). */
  storeEmbeddings: () => Promise<void>;
  /** Reserved with the user's message (storeUserMessage). */
  replyId?: number;
  /** Retrieval and the inventory summary (startContext), started once the conversation is known. */
  context?: Promise<[ConversationContext, string]>;
  /** The conversation's messages before this one, read once the conversation is known. */
  history?: Promise<MessageRow[]>;
}

interface Attachment {
  job: VisionJob['image'];
}

/** The client's message id, even from a payload that fails validation, so chatError can name it. */
function clientMessageIdOf(raw: unknown): string | null {
  const id = (raw as { clientMessageId?: unknown } | null)?.clientMessageId;
  return typeof id === 'string' ? id : null;
}

export class ChatService {
  private readonly tools: ChatTool[];
  /** The tools' specs (JSON schemas), made once. */
  private readonly specs: ToolSpec[];

  constructor(
    private readonly d: ChatServiceDeps,
    private readonly opts: ChatServiceOptions,
  ) {
    this.tools = chatTools({ inventory: d.inventory, memory: d.memory });
    this.specs = toolSpecs(this.tools);
  }

  /** The tools the model may be offered in a chat turn (each protocol allows a subset). */
  toolCatalogue(): ToolSpec[] {
    return this.specs;
  }

  /** One chatMessage. Resolves with the ids for the ack; throws ChatTurnError (already a chatError
   * payload) on any failure. */
  handleMessage(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    return this.timed('chatMessage', emit, (timedEmit) => this.message(user, raw, timedEmit));
  }

  /** directNpcMessage: the named NPC answers, bypassing the group director. */
  handleDirectNpcMessage(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    return this.timed('directNpcMessage', emit, (timedEmit) => this.directNpcMessage(user, raw, timedEmit));
  }

  /** Runs a turn and records its latency (received → last response sent) and its model calls'
   * share in the metrics. */
  private timed<T>(event: string, emit: TurnEmitter, turn: (emit: TurnEmitter) => Promise<T>): Promise<T> {
    const started = performance.now();
    let answered = 0;
    const timedEmit: TurnEmitter = {
      ...emit,
      response: (e) => {
        emit.response(e);
        answered = performance.now();
      },
      directResponse: (e) => {
        emit.directResponse(e);
        answered = performance.now();
      },
    };
    return withModelTime(async (model) => {
      try {
        const result = await turn(timedEmit);
        this.d.metrics.chatTurn(event, 'ok', (answered || performance.now()) - started, model.ms);
        return result;
      } catch (err) {
        this.d.metrics.chatTurn(event, 'error', performance.now() - started, model.ms);
        throw err;
      }
    });
  }

  private async message(
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
      const limited = this.rateLimit(user.id);
      const prepared = this.prepare(user, input.message, limited);
      const conversationRead = this.d.conversations.resolve(user.id, input.conversationId);
      const [, conversation, existing] = await Promise.all([
        limited,
        conversationRead,
        input.clientMessageId
          ? repo.findByClientMessageId(this.d.db, user.id, input.clientMessageId)
          : undefined,
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
          emit.thinking({ conversationId: conversation.id });
          for (const reply of await repo.repliesTo(this.d.db, existing.id))
            emit.response(await this.present(reply));
          emit.idle({ conversationId: conversation.id });
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
      // Retrieval starts now, with the lead speaker's id (its name and description, read beside
      // it, are needed only once retrieval is done), and goes on while the message is stored
      // (answer() awaits it; a failure surfaces there or, for a bad speaker, just below).
      const speakersRead = this.speakersFor(conversation.npc_user_ids, input.npcUserId);
      const leadId = await this.leadOf(conversation.npc_user_ids, input.npcUserId);
      if (leadId !== undefined)
        void this.startContext(
          prepared,
          user,
          { id: leadId, info: speakersRead.then((s) => s[0]!) },
          input.message,
          conversation.id,
        );
      const [speakers, attachments] = await Promise.all([speakersRead, this.attachments(user.id, input)]);

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
          attachments,
        );
        userMessage = stored.message;
        prepared.replyId = stored.replyId;
      }

      emit.thinking({ conversationId: conversation.id });
      await this.runTurn(
        user,
        conversation.id,
        userMessage,
        input.message,
        input.preferences,
        speakers,
        prepared,
        emit,
      );
      emit.idle({ conversationId: conversation.id });
      return { conversationId: conversation.id, messageId: userMessage.id };
    } catch (err) {
      if (userMessage)
        await repo.setMessageStatus(this.d.db, userMessage.id, 'failed').catch(() => undefined);
      if (conversationId !== null) emit.idle({ conversationId });
      throw this.turnError(err, conversationId, clientMessageId);
    }
  }

  private async directNpcMessage(user: UserPrincipal, raw: unknown, emit: TurnEmitter) {
    let conversationId: number | null = null;
    let userMessage: MessageRow | undefined;
    try {
      const input = parseOrThrow(directNpcMessageSchema, raw, 'directNpcMessage');
      await this.rateLimit(user.id);
      const [npc] = await this.speakersFor([], input.npcUserId, true);
      const conversation = await this.d.conversations.resolve(user.id, undefined);
      conversationId = conversation.id;
      if (input.clientMessageId) {
        const existing = await repo.findByClientMessageId(this.d.db, user.id, input.clientMessageId);
        if (existing?.status === 'answered') {
          const [reply] = await repo.repliesTo(this.d.db, existing.id);
          if (reply)
            emit.directResponse({
              npcUserId: npc!.id,
              npcName: npc!.name,
              messageId: reply.id,
              text: reply.text,
              createdAt: reply.created_at.toISOString(),
            });
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
      const { replies, finish } = await this.answer(
        user,
        conversation.id,
        userMessage,
        input.message,
        input.preferences,
        [npc!],
        this.prepare(user, input.message),
        { stream: false, emit: null },
      );
      const reply = replies[0]!;
      emit.directResponse({
        npcUserId: npc!.id,
        npcName: npc!.name,
        messageId: reply.id,
        text: reply.text,
        createdAt: reply.created_at.toISOString(),
      });
      await finish();
      return { conversationId: conversation.id, messageId: userMessage.id };
    } catch (err) {
      if (userMessage)
        await repo.setMessageStatus(this.d.db, userMessage.id, 'failed').catch(() => undefined);
      throw this.turnError(err, conversationId, clientMessageIdOf(raw));
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

  /** Who may answer: the named NPC (it must be in the conversation, or be the assistant), the
   * conversation's NPCs (group chat), or the assistant. */
  private async speakersFor(
    npcUserIds: number[],
    requested: number | undefined,
    direct = false,
  ): Promise<Speaker[]> {
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
  private async leadOf(npcUserIds: number[], requested: number | undefined): Promise<number | undefined> {
    const assistantId = await this.d.characters.assistantUserId();
    if (requested === undefined) return npcUserIds[0] ?? assistantId;
    return requested === assistantId || npcUserIds.includes(requested) ? requested : undefined;
  }

  private async speaker(id: number): Promise<Speaker> {
    try {
      const { npc, state } = await this.d.characters.getNpcWithState(id);
      return { id, name: npc.name, description: npc.description, emotions: state.emotions };
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found')
        throw new AppError('validation_failed', 'No such character', {
          errors: [{ path: 'npcUserId', message: `user ${id} is not a character` }],
        });
      throw err;
    }
  }

  private prepare(user: UserPrincipal, text: string, gate?: Promise<unknown>): Prepared {
    // spec: at most one embedding request per message: the query, batched with pending memories.
    const embedded = this.d.memory.embedQueryBatched(text, undefined, gate);
    const prepared: Prepared = {
      // After the rate limit passed (it is needed only to compose the prompt): a turn's first
      // statements are the ones its embedding request waits for, and a refused message costs no
      // routing reads.
      routing: (gate ?? Promise.resolve()).then(() => this.d.protocols.routeUser(user.id)),
      queryEmbedding: embedded.embedding,
      storeEmbeddings: embedded.store,
    };
    // A turn that fails before it awaits these must not leave a rejection unhandled; awaiting them
    // later still throws.
    prepared.routing.catch(() => undefined);
    prepared.queryEmbedding.catch(() => undefined);
    return prepared;
  }

  /** Starts (once) gathering the turn's context: the memory retrieval, which begins its full-text
   * side at once and its vector side when the query's embedding arrives (neither waits for
   * routing), and the inventory summary. */
  private startContext(
    prepared: Prepared,
    user: UserPrincipal,
    lead: { id: number; info: Speaker | Promise<Speaker> },
    text: string,
    conversationId: number,
  ): Promise<[ConversationContext, string]> {
    if (!prepared.context) {
      const npcInfo = Promise.resolve(lead.info).then((s) => ({
        name: s.name,
        description: s.description,
        assistant_user_id: s.id,
      }));
      // Awaited once retrieval is done; a bad speaker fails the turn where it is read.
      npcInfo.catch(() => undefined);
      prepared.context = Promise.all([
        this.d.memory.gatherContext(user.id, lead.id, text, conversationId, {
          queryEmbedding: prepared.queryEmbedding,
          npcInfo,
        }),
        this.d.inventory.promptSummary(user.id),
      ]);
      prepared.context.catch(() => undefined);
    }
    return prepared.context;
  }

  /** The user's message, with the vision jobs of its images in the same transaction. */
  private async storeUserMessage(m: repo.NewMessage, attachments: Attachment[]) {
    if (attachments.length === 0) return repo.insertMessageReservingReply(this.d.db, m);
    return transaction(this.d.db, async (trx) => {
      const stored = await repo.insertMessageReservingReply(trx, m);
      // spec: one vision call per attached image, in the background, linked to the conversation.
      for (const a of attachments)
        await this.d.jobs.enqueue(trx, VISION_JOB, {
          userId: m.userId,
          conversationId: m.conversationId,
          messageId: stored.message.id,
          image: a.job,
        } satisfies VisionJob);
      return stored;
    });
  }

  /** Checks every attachment before anything is stored; the fetch and the vision call run later. */
  private async attachments(userId: number, input: ChatMessageInput): Promise<Attachment[]> {
    const out: Attachment[] = [];
    for (const [i, url] of (input.attachmentUrls ?? []).entries()) {
      try {
        await vetUrl(url, { timeoutMs: this.opts.attachmentTimeoutMs });
      } catch (err) {
        if (err instanceof SafeFetchError)
          throw new AppError('validation_failed', err.message, {
            errors: [{ path: `chatMessage.attachmentUrls.${i}`, message: err.message }],
          });
        throw err;
      }
      out.push({ job: { kind: 'url', url } });
    }
    for (const [i, b64] of (input.imageBase64Array ?? []).entries()) {
      const bytes = decodeBase64Image(b64);
      const path = `chatMessage.imageBase64Array.${i}`;
      if (!bytes)
        throw new AppError('validation_failed', 'Not a base64 image', {
          errors: [{ path, message: 'not base64' }],
        });
      if (bytes.byteLength > MAX_IMAGE_BYTES)
        throw new AppError('payload_too_large', `An image may be at most ${MAX_IMAGE_BYTES} bytes`);
      out.push({ job: { kind: 'inline', data: bytes.toString('base64') } });
    }
    if (input.uploadContextId) {
      for (const f of await this.d.files.readContext(userId, input.uploadContextId))
        if (f.mimeType.startsWith('image/'))
          out.push({ job: { kind: 'upload', uploadContextId: input.uploadContextId, fileId: f.id } });
    }
    return out;
  }

  private async runTurn(
    user: UserPrincipal,
    conversationId: number,
    userMessage: MessageRow,
    text: string,
    prefs: UserPreferences | undefined,
    speakers: Speaker[],
    prepared: Prepared,
    emit: TurnEmitter,
  ) {
    const { replies, finish } = await this.answer(
      user,
      conversationId,
      userMessage,
      text,
      prefs,
      speakers,
      prepared,
      {
        stream: prefs?.stream !== false,
        emit,
      },
    );
    for (const r of replies) emit.response(await this.present(r, speakers));
    await finish();
  }

  /** Builds the prompt, calls the model (at most twice), stores the replies. Returns them, and
   * `finish`, which the caller runs once they are sent: it stores the exchange as a shared memory
   * (never throws). */
  private async answer(
    user: UserPrincipal,
    conversationId: number,
    userMessage: MessageRow,
    text: string,
    prefs: UserPreferences | undefined,
    speakers: Speaker[],
    prepared: Prepared,
    mode: { stream: boolean; emit: TurnEmitter | null },
  ): Promise<{ replies: MessageRow[]; finish: () => Promise<void> }> {
    const group = speakers.length > 1;
    const lead = speakers[0]!;
    // The reply's id is reserved before the model is called so streamed deltas can name it: with
    // the user's message when it was stored by this turn, else now.
    // Independent steps run together (on PostgreSQL they use separate pool connections).
    const [routing, replyId, [context, inventorySummary], history] = await Promise.all([
      prepared.routing,
      group ? null : (prepared.replyId ?? repo.reserveMessageId(this.d.db)),
      this.startContext(prepared, user, { id: lead.id, info: lead }, text, conversationId),
      prepared.history ??
        repo.history(this.d.db, conversationId, this.opts.historyMessages + 1, userMessage.id),
    ]);
    const memoryContext = [
      context.memoryContext.worldContext && `World:\n${context.memoryContext.worldContext}`,
      context.memoryContext.assistantContext &&
        `About ${lead.name}:\n${context.memoryContext.assistantContext}`,
      context.memoryContext.personalContext && `About the player:\n${context.memoryContext.personalContext}`,
    ]
      .filter(Boolean)
      .join('\n\n');
    const composed = composeSystemPrompt(routing.resolved, {
      tools: group ? [] : this.specs,
      values: {
        assistantName: this.d.assistantName,
        playerName: user.name,
        npcName: lead.name,
        inventorySummary,
        memoryContext,
        stateSummary: lead.emotions !== undefined ? JSON.stringify({ emotions: lead.emotions }) : undefined,
        language: prefs?.language,
        responseLength: prefs?.responseLength,
        date: new Date().toISOString().slice(0, 10),
      },
    });
    const system = [
      composed.system,
      group
        ? directorInstruction(
            speakers.map((s): Npc => ({ id: s.id, name: s.name, description: s.description })),
          )
        : `You are ${lead.name}.${lead.description ? ` ${lead.description}` : ''}`,
      lengthInstruction(prefs),
      prefs?.language ? `Answer in the language ${prefs.language}.` : '',
      group ? '' : CHOICES_INSTRUCTION,
    ]
      .filter(Boolean)
      .join('\n\n');
    const earlier = history.filter((m) => m.id < userMessage.id).slice(-this.opts.historyMessages);
    const messages: ModelMessage[] = [
      ...earlier.map((m): ModelMessage =>
        m.role === 'user' ? { role: 'user', content: m.text } : { role: 'assistant', content: m.text },
      ),
      { role: 'user', content: text },
    ];
    // The offline model speaks in the protocol's tone; the categories are the tones.
    const grounding = {
      memories: context.memories.map((m) => m.content),
      tone: routing.protocol,
      speakerName: lead.name,
    };
    const allowed = new Set(group ? [] : composed.tools.map((c) => c.name));
    const offered = this.specs.filter((spec) => allowed.has(spec.name));
    const offeredTools = this.tools.filter((t) => allowed.has(t.name));

    const filter = new ChoicesFilter();
    const onDelta = (delta: string) => {
      const visible = filter.push(delta);
      if (visible && mode.emit && replyId !== null)
        mode.emit.delta({ conversationId, messageId: replyId, delta: visible });
    };
    const call = (extra: ModelMessage[], withTools: boolean): Promise<ChatResult> => {
      const req = {
        purpose: group ? 'chat.director' : 'chat.turn',
        system,
        messages: [...messages, ...extra],
        tools: withTools ? offered : [],
        toolChoice: withTools && offeredTools.length > 0 ? ('auto' as const) : ('none' as const),
        maxOutputTokens: maxTokensFor(prefs) * (group ? speakers.length : 1),
        grounding,
      };
      return mode.stream && !group ? this.d.models.streamChat(req, onDelta) : this.d.models.chat(req);
    };

    // spec: one or two chat calls per message; the second only after a tool request.
    let result = await call([], offeredTools.length > 0);
    const toolsRun: { name: string; result: unknown }[] = [];
    if (result.toolCalls.length > 0) {
      const outcomes = await runToolCalls(
        offeredTools,
        result.toolCalls,
        { playerUserId: user.id, actorUserId: lead.id, conversationId },
        this.opts.toolCallsPerTurn,
      );
      toolsRun.push(...outcomes.map((o) => ({ name: o.call.name, result: o.result })));
      result = await call(
        [
          { role: 'assistant', content: result.text, toolCalls: result.toolCalls },
          ...outcomes.map((o): ModelMessage => ({
            role: 'tool',
            toolCallId: o.call.id,
            toolName: o.call.name,
            result: o.result,
          })),
        ],
        false,
      );
    }
    const rest = filter.flush();
    if (rest && mode.emit && replyId !== null)
      mode.emit.delta({ conversationId, messageId: replyId, delta: rest });

    const meta = {
      provider: result.provider,
      model: result.model,
      offline: result.offline,
      protocolId: routing.protocolId,
      ...(toolsRun.length ? { tools: toolsRun } : {}),
    };
    const planned = group
      ? (() => {
          const d = parseDirectorReply(
            result.text,
            speakers.map((s) => ({ id: s.id, name: s.name, description: s.description })),
          );
          return d.responses.map((r, i) => ({
            npcUserId: r.npcUserId,
            text: r.text,
            choices: i === d.responses.length - 1 ? d.choices : [],
          }));
        })()
      : (() => {
          const { text: answer, choices } = extractChoices(result.text);
          return [{ npcUserId: lead.id, text: answer || '…', choices }];
        })();

    // The replies (and the user's message marked answered) in one statement; the turn's responses
    // go out as soon as it is committed.
    const replies = await repo.storeReplies(
      this.d.db,
      planned.map((p, i) => ({
        ...(i === 0 && replyId !== null ? { id: replyId } : {}),
        conversationId,
        userId: user.id,
        role: 'assistant' as const,
        npcUserId: p.npcUserId,
        text: p.text,
        replyToId: userMessage.id,
        metadata: { ...meta, choices: p.choices.map((c, n) => ({ id: `${n + 1}`, text: c })) },
      })),
      userMessage.id,
    );
    // After the responses are sent (the turn ends only when it is done): the exchange becomes shared
    // memory of the player, its embedding riding along with the next turn's query embedding (or a
    // delayed job); and the memories embedded with this turn's query are stored. Written after
    // the replies, never beside them, so a failed reply leaves no memory of an exchange that did
    // not happen; a failure here costs the memory, not the answered turn.
    const names = new Map(speakers.map((s) => [s.id, s.name]));
    const finish = async () => {
      const embeddingsStored = prepared.storeEmbeddings();
      try {
        await this.d.memory.addMemories(
          [
            {
              userId: user.id,
              source: 'shared',
              content:
                `${user.name}: ${text}\n${planned.map((p) => `${names.get(p.npcUserId) ?? 'Assistant'}: ${p.text}`).join('\n')}`.slice(
                  0,
                  8000,
                ),
              conversationId,
              metadata: { conversationId, playerName: user.name, npcName: lead.name },
            },
          ],
          undefined,
          { deferEmbedding: true },
        );
      } catch (err) {
        this.d.log.warn({ err, conversationId }, 'could not store the chat exchange as a memory');
      }
      await embeddingsStored;
    };
    return { replies, finish };
  }

  /** A stored reply as an assistantResponse; `known` saves looking up the turn's own speakers. */
  private async present(m: MessageRow, known: Speaker[] = []) {
    const p = presentMessage(m);
    const npcUserId = m.npc_user_id ?? (await this.d.characters.assistantUserId());
    const speaker =
      known.find((s) => s.id === npcUserId) ??
      (await this.speaker(npcUserId).catch(() => ({ name: this.d.assistantName })));
    return {
      conversationId: p.conversationId,
      messageId: p.id,
      npcUserId,
      npcName: speaker.name,
      text: p.text,
      createdAt: p.createdAt,
    };
  }
}
