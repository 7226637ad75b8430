// The model's stages of a turn, each a method with its inputs and outputs typed, called one after
// another by the turn (chat.turn.ts): `prompt` (the context stage and the composition, also the
// admin preview's), `model` (one call, streamed or not), `tools` (the calls the model asked for,
// run as the director), `store` (the replies planned from the answer, stored) and `remember` (the
// exchange kept as a shared memory once the replies are sent).
import type { ChatMessage as ModelMessage, ChatResult, ToolSpec } from '../../platform/models/provider.js';
import type { NpcTools } from '../characters/index.js';
import { ChoicesFilter, extractChoices, maxTokensFor, parseDirectorReply } from './chat.rules.js';
import { chatTools, runToolCalls, toolSpecs, TurnTools, type ChatTool } from './chat.tools.js';
import * as repo from './conversations.repository.js';
import type { MessageRow } from './conversations.service.js';
import type {
  ChatServiceDeps,
  ChatServiceOptions,
  PromptRequest,
  Speaker,
  Turn,
  TurnEmitter,
} from './chat.types.js';
import type { FittedContext } from './chat.context.rules.js';
import { buildPrompt } from './chat.prompt.js';
import { TurnContextReader } from './chat.context.js';

/** The prompt a turn sends, with what its later stages need of its composition. */
export interface ComposedPrompt extends ReturnType<typeof buildPrompt> {
  context: FittedContext['context'];
  dropped: FittedContext['dropped'];
  /** A scene's director speaks for more than one speaker. */
  group: boolean;
  lead: Speaker;
  /** Who the tools act as: the speaker, or the assistant for a scene's director. */
  actorUserId: number;
  actorTools: { limits: NpcTools; specs: ToolSpec[] };
}

/** The tool calls one model answer asked for, with their results. */
export type ToolRun = { call: ChatResult['toolCalls'][number]; result: unknown }[];

/** How a turn's answer goes out while the model writes it: streamed deltas, or nothing. */
export interface TurnStream {
  stream: boolean;
  emit: TurnEmitter | null;
}

/** A reply as planned from the model's answer, before it is stored. */
interface PlannedReply {
  npcUserId: number;
  text: string;
  choices: string[];
}

export class ModelTurn {
  private readonly chatTools: ChatTool[];
  /** The tools' specs (JSON schemas), made once. */
  readonly specs: ToolSpec[];
  private readonly context: TurnContextReader;
  /** The speaking character's tools and limits (its card's `tools`). */
  private readonly turnTools: TurnTools;

  constructor(
    private readonly d: ChatServiceDeps,
    private readonly opts: ChatServiceOptions,
  ) {
    const toolDeps = { ...d, approve: opts.toolApproval };
    this.chatTools = chatTools(toolDeps);
    this.specs = toolSpecs(this.chatTools);
    this.turnTools = new TurnTools(toolDeps, this.specs);
    this.context = new TurnContextReader(d, opts.contextTokens);
  }

  /** The context stage and the prompt composed from it: the context (read by TurnContextReader,
   * cut to the protocol's reach and the budget), the history, and, for the assistant's own
   * turns, the ground floor; composed by buildPrompt. The one path of both the chat turn and the
   * admin prompt preview, so the preview shows exactly what a turn would send. */
  async prompt(req: PromptRequest): Promise<ComposedPrompt> {
    const { user, text, prefs, cast, routing, history } = req;
    const { speakers } = cast;
    const group = speakers.length > 1;
    const lead = speakers[0]!;
    const assistantId = await this.d.characters.assistantUserId();
    // A group's director acts as the assistant (spec: inventory rule 3), not as one of its cast.
    const actorUserId = group ? assistantId : lead.id;
    // The lead speaker's card was read with it; a director's (the assistant's) is read here.
    const actorCard =
      !group && lead.card?.tools !== undefined
        ? { tools: lead.card.tools, isAssistant: lead.isAssistant ?? false }
        : undefined;
    // Side by side: reads of different owners that the composition waits for together.
    const [gathered, groundFloor, actorTools, historyNames] = await Promise.all([
      this.context.read(req),
      // The assistant's own turns (not an NPC's, not a group's) end with the ground floor.
      !group && lead.id === assistantId ? this.d.protocols.groundFloor() : undefined,
      this.turnTools.forActor(actorUserId, actorCard),
      this.historyNames(history, speakers),
    ]);
    const { context, values, knowledge, dropped } = this.context.fit(
      gathered,
      routing,
      speakers.map((s) => s.id),
      { channelId: req.channelId, clientType: user.clientType },
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
      // The history holds only messages before the turn's.
      messageId: Number.MAX_SAFE_INTEGER,
      historyMessages: this.opts.historyMessages,
      text,
      today: new Date().toISOString().slice(0, 10),
      groundFloor,
      documents: req.documents,
    });
    return { ...built, context, dropped, group, lead, actorUserId, actorTools };
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

  /** The tools the protocol allows and the actor's card grants, offered to the model. */
  private offered(p: ComposedPrompt) {
    const allowed = new Set(p.tools.map((c) => c.name));
    return {
      specs: p.actorTools.specs.filter((spec) => allowed.has(spec.name)),
      tools: this.chatTools.filter((t) => allowed.has(t.name)),
    };
  }

  /** The deltas of a streamed answer as the client sees them (the choices block held back), over
   * both of a turn's calls; `flush` sends what is held once the answer is complete. */
  deltas(turn: Turn, out: TurnStream) {
    const filter = new ChoicesFilter();
    const send = (visible: string) => {
      if (visible && out.emit && turn.replyId !== null)
        out.emit.delta({ conversationId: turn.conversationId, messageId: turn.replyId, delta: visible });
    };
    return { push: (delta: string) => send(filter.push(delta)), flush: () => send(filter.flush()) };
  }

  /** The model stage: one chat call, with the offered tools (the first call) or after the tools'
   * results (the second, which offers none). Streamed when the client asked for it and one
   * speaker answers. */
  model(
    turn: Turn,
    p: ComposedPrompt,
    out: TurnStream & { onDelta: (delta: string) => void },
    after?: { answer: ChatResult; ran: ToolRun },
  ): Promise<ChatResult> {
    const offered = this.offered(p);
    const withTools = after === undefined && offered.tools.length > 0;
    const extra: ModelMessage[] = after
      ? [
          { role: 'assistant', content: after.answer.text, toolCalls: after.answer.toolCalls },
          ...after.ran.map((o): ModelMessage => ({
            role: 'tool',
            toolCallId: o.call.id,
            toolName: o.call.name,
            result: o.result,
          })),
        ]
      : [];
    const req = {
      purpose: p.group ? 'chat.director' : 'chat.turn',
      system: p.system,
      messages: [...p.messages, ...extra],
      tools: withTools ? offered.specs : [],
      toolChoice: withTools ? ('auto' as const) : ('none' as const),
      maxOutputTokens: maxTokensFor(turn.prefs) * (p.group ? turn.cast.speakers.length : 1),
      // The offline model speaks in the protocol's tone; the categories are the tones.
      grounding: {
        memories: p.context.memories.map((m) => ({
          content: m.content,
          createdAt: m.createdAt.toISOString(),
        })),
        tone: turn.routing.protocol === 'GROUND_FLOOR' ? ('CUSTOM' as const) : turn.routing.protocol,
        speakerName: p.lead.name,
      },
    };
    return out.stream && !p.group ? this.d.models.streamChat(req, out.onDelta) : this.d.models.chat(req);
  }

  /** The tools stage: the calls the first answer asked for, run as the director over this player
   * only (spec: one or two chat calls per message; the second only after a tool request). */
  async tools(turn: Turn, p: ComposedPrompt, answer: ChatResult): Promise<ToolRun> {
    if (answer.toolCalls.length === 0) return [];
    return runToolCalls(
      this.offered(p).tools,
      answer.toolCalls,
      {
        playerUserId: turn.user.id,
        actorUserId: p.actorUserId,
        conversationId: turn.conversationId,
        memoryAccess: turn.routing.resolved.capabilities.memoryAccess,
        limits: p.actorTools.limits,
      },
      this.opts.toolCallsPerTurn,
    );
  }

  /** The store stage: the replies planned from the final answer (a director's split by speaker),
   * and the user's message marked answered, in one statement. `answers` are the turn's calls, in
   * order (the first reply carries their summed token usage). */
  async store(
    turn: Turn,
    p: ComposedPrompt,
    answers: ChatResult[],
    ran: ToolRun,
  ): Promise<{ replies: MessageRow[]; planned: PlannedReply[] }> {
    const result = answers.at(-1)!;
    const planned = this.plan(turn.cast.speakers, p, result.text);
    const meta = {
      provider: result.provider,
      model: result.model,
      offline: result.offline,
      protocolId: turn.routing.protocolId,
      usage: {
        inputTokens: answers.reduce((n, a) => n + a.usage.inputTokens, 0),
        outputTokens: answers.reduce((n, a) => n + a.usage.outputTokens, 0),
      },
      ...(ran.length ? { tools: ran.map((o) => ({ name: o.call.name, result: o.result })) } : {}),
    };
    const replies = await repo.storeReplies(
      this.d.db,
      planned.map((r, i) => ({
        ...(i === 0 && turn.replyId !== null ? { id: turn.replyId } : {}),
        conversationId: turn.conversationId,
        userId: turn.user.id,
        role: 'assistant' as const,
        npcUserId: r.npcUserId,
        text: r.text,
        replyToId: turn.userMessage.id,
        metadata: {
          ...meta,
          ...(i > 0 ? { usage: undefined } : {}),
          choices: r.choices.map((c, n) => ({ id: `${n + 1}`, text: c })),
        },
      })),
      turn.userMessage.id,
    );
    return { replies, planned };
  }

  private plan(speakers: Speaker[], p: ComposedPrompt, text: string): PlannedReply[] {
    if (!p.group) {
      const { text: answer, choices } = extractChoices(text);
      return [{ npcUserId: p.lead.id, text: answer || '…', choices }];
    }
    const d = parseDirectorReply(
      text,
      speakers.map((s) => ({ id: s.id, name: s.name, description: s.description })),
    );
    return d.responses.map((r, i) => ({
      npcUserId: r.npcUserId,
      text: r.text,
      choices: i === d.responses.length - 1 ? d.choices : [],
    }));
  }

  /** After the replies are sent (the turn ends only when it is done): the exchange becomes shared
   * memory of the player, its embedding riding along with the next turn's query embedding (or a
   * delayed job); and the memories embedded with this turn's query are stored. Written after the
   * replies, never beside them, so a failed reply leaves no memory of an exchange that did not
   * happen; neither write throws (each logs), so a failure costs the memory, not the turn. */
  async remember(turn: Turn, p: ComposedPrompt, planned: PlannedReply[]): Promise<void> {
    const names = new Map(turn.cast.speakers.map((s) => [s.id, s.name]));
    await this.d.memory.rememberExchange({
      userId: turn.user.id,
      conversationId: turn.conversationId,
      playerName: turn.user.name,
      speaker: { id: p.lead.id, name: p.lead.name },
      userText: turn.text,
      replies: planned.map((r) => ({ speakerName: names.get(r.npcUserId) ?? 'Assistant', text: r.text })),
      // One memory base for every persona: the exchange is the caller's, marked with the session
      // it happened in.
      metadata: turn.persona
        ? { personaSessionId: turn.persona.sessionId, persona: turn.persona.persona }
        : {},
    });
    await turn.storeEmbeddings();
  }
}
