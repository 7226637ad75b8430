// The model's part of a turn: the context (retrieval and the inventory summary, started as soon
// as the conversation is known), the system prompt composed from the routed protocol, the model
// call (streamed or not) with the tools the protocol allows and their calls run as the director,
// a second call only after a tool request, the replies planned from the answer and stored, and
// the exchange kept as a shared memory once they are sent.
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { ChatMessage as ModelMessage, ChatResult, ToolSpec } from '../../platform/models/provider.js';
import { ChoicesFilter, extractChoices, maxTokensFor, parseDirectorReply } from './chat.rules.js';
import { chatTools, runToolCalls, toolSpecs, TurnTools, type ChatTool } from './chat.tools.js';
import * as repo from './conversations.repository.js';
import type { MessageRow } from './conversations.service.js';
import type {
  TurnEmitter,
  ChatServiceDeps,
  ChatServiceOptions,
  Prepared,
  PromptRequest,
  Speaker,
  Turn,
  TurnCast,
} from './chat.types.js';
import { ChatSpeakers } from './chat.speakers.js';
import { buildPrompt } from './chat.prompt.js';
import { TurnContextReader } from './chat.context.js';

export class ModelTurn {
  private readonly tools: ChatTool[];
  /** The tools' specs (JSON schemas), made once. */
  readonly specs: ToolSpec[];
  private readonly context: TurnContextReader;
  /** The speaking character's tools and limits (its card's `tools`). */
  private readonly turnTools: TurnTools;

  constructor(
    private readonly d: ChatServiceDeps,
    private readonly opts: ChatServiceOptions,
    private readonly speakers: ChatSpeakers,
  ) {
    const toolDeps = { ...d, approve: opts.toolApproval };
    this.tools = chatTools(toolDeps);
    this.specs = toolSpecs(this.tools);
    this.turnTools = new TurnTools(toolDeps, this.specs);
    this.context = new TurnContextReader(d, opts.contextTokens);
  }

  /** Starts (once) reading the turn's context (TurnContextReader.start). */
  startContext(
    prepared: Prepared,
    user: Pick<UserPrincipal, 'id' | 'name'>,
    cast: TurnCast,
    text: string,
    conversationId: number | undefined,
  ) {
    return this.context.start(prepared, user, cast, text, conversationId);
  }

  /** The prompt a turn sends now: routing (prepared), the context (read by TurnContextReader, cut
   * to the protocol's reach and the budget), the history before the message, and, for the
   * assistant's own turns, the ground floor; composed by buildPrompt. The one path of both the
   * chat turn (`answer`) and the admin prompt preview, so the preview shows exactly what a turn
   * would send. */
  async prompt(p: PromptRequest) {
    const { user, conversationId, text, prefs, speakers, prepared } = p;
    const group = speakers.length > 1;
    const lead = speakers[0]!;
    // A group's director acts as the assistant (spec: inventory rule 3), not as one of its cast.
    const actorUserId = group ? await this.d.characters.assistantUserId() : lead.id;
    const [routing, gathered, history, groundFloor, documents, actorTools] = await Promise.all([
      prepared.routing,
      this.startContext(
        prepared,
        user,
        this.speakers.castOf(user.id, speakers),
        text,
        conversationId ?? undefined,
      ),
      prepared.history ??
        (conversationId === null
          ? []
          : repo.history(this.d.db, conversationId, this.opts.historyMessages + 1, p.messageId)),
      // The assistant's own turns (not an NPC's, not a group's) end with the ground floor.
      group
        ? undefined
        : this.d.characters
            .assistantUserId()
            .then((id) => (id === lead.id ? this.d.protocols.groundFloor() : undefined)),
      prepared.documents,
      this.turnTools.forActor(actorUserId),
    ]);
    const historyNames = await this.historyNames(history, speakers);
    const { context, values, knowledge, dropped } = this.context.fit(
      gathered,
      routing,
      speakers.map((s) => s.id),
      {
        channelId: prepared.channelId,
        clientType: user.clientType,
      },
    );
    const built = buildPrompt({
      protocol: routing.resolved,
      specs: actorTools.specs,
      assistantName: this.d.assistantName,
      playerName: user.name,
      speakers,
      memoryContext: context.memoryContext,
      memories: context.memories,
      playerUserId: user.id,
      historyNames,
      contextValues: values,
      knowledge,
      prefs,
      history,
      messageId: p.messageId,
      historyMessages: this.opts.historyMessages,
      text,
      today: new Date().toISOString().slice(0, 10),
      groundFloor,
      documents,
    });
    return { ...built, routing, context, dropped, group, lead, actorUserId, actorTools };
  }

  /** The names of the characters who spoke in `history` and are not among the speakers (a
   * scene's earlier lines are attributed to them); no read when there are none. */
  private async historyNames(history: MessageRow[], speakers: Speaker[]): Promise<Map<number, string>> {
    const known = new Set(speakers.map((s) => s.id));
    const others = [
      ...new Set(
        history.flatMap((m) => (m.npc_user_id !== null && !known.has(m.npc_user_id) ? [m.npc_user_id] : [])),
      ),
    ];
    if (others.length === 0) return new Map();
    const who = await this.d.users.identities(others);
    return new Map([...who].map(([id, u]) => [id, u.name]));
  }

  /** Builds the prompt, calls the model (at most twice), stores the replies. Returns them, and
   * `finish`, which the caller runs once they are sent: it stores the exchange as a shared memory
   * (never throws). */
  async answer(
    turn: Turn,
    mode: { stream: boolean; emit: TurnEmitter | null },
  ): Promise<{ replies: MessageRow[]; finish: () => Promise<void> }> {
    const { user, conversationId, userMessage, text, prefs, speakers, prepared } = turn;
    // The reply's id is reserved before the model is called so streamed deltas can name it: with
    // the user's message when it was stored by this turn, else now.
    // Independent steps run together (on PostgreSQL they use separate pool connections).
    const [replyId, p] = await Promise.all([
      speakers.length > 1 ? null : (prepared.replyId ?? repo.reserveMessageId(this.d.db)),
      this.prompt({ user, conversationId, messageId: userMessage.id, text, prefs, speakers, prepared }),
    ]);
    const { system, messages, tools: allowedByProtocol, routing, context, group, lead } = p;
    // The offline model speaks in the protocol's tone; the categories are the tones.
    const grounding = {
      memories: context.memories.map((m) => ({ content: m.content, createdAt: m.createdAt.toISOString() })),
      tone: routing.protocol === 'GROUND_FLOOR' ? ('CUSTOM' as const) : routing.protocol,
      speakerName: lead.name,
    };
    const allowed = new Set(allowedByProtocol.map((c) => c.name));
    const offered = p.actorTools.specs.filter((spec) => allowed.has(spec.name));
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
    const usage = { ...result.usage };
    const toolsRun: { name: string; result: unknown }[] = [];
    if (result.toolCalls.length > 0) {
      const outcomes = await runToolCalls(
        offeredTools,
        result.toolCalls,
        {
          playerUserId: user.id,
          actorUserId: p.actorUserId,
          conversationId,
          memoryAccess: routing.resolved.capabilities.memoryAccess,
          limits: p.actorTools.limits,
        },
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
      usage.inputTokens += result.usage.inputTokens;
      usage.outputTokens += result.usage.outputTokens;
    }
    const rest = filter.flush();
    if (rest && mode.emit && replyId !== null)
      mode.emit.delta({ conversationId, messageId: replyId, delta: rest });

    const meta = {
      provider: result.provider,
      model: result.model,
      offline: result.offline,
      protocolId: routing.protocolId,
      // The turn's token usage over its calls (the first reply carries it).
      usage,
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
        metadata: {
          ...meta,
          ...(i > 0 ? { usage: undefined } : {}),
          choices: p.choices.map((c, n) => ({ id: `${n + 1}`, text: c })),
        },
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
      await this.d.memory.rememberExchange({
        userId: user.id,
        conversationId,
        playerName: user.name,
        speaker: { id: lead.id, name: lead.name },
        userText: text,
        replies: planned.map((p) => ({ speakerName: names.get(p.npcUserId) ?? 'Assistant', text: p.text })),
        // One memory base for every persona: the exchange is the caller's, marked with the
        // session it happened in.
        metadata: turn.persona
          ? { personaSessionId: turn.persona.sessionId, persona: turn.persona.persona }
          : {},
      });
      await embeddingsStored;
    };
    return { replies, finish };
  }
}
