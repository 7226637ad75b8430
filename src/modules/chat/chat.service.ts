// The chat module's service, the facade the socket handlers and routes call: each turn
// (chat.turn.ts) timed for the metrics, and the tool catalogue.
import type { UserPrincipal } from '../../platform/http/auth.js';
import { toProblem } from '../../platform/http/problem.js';
import { traced } from '../../platform/tracing.js';
import { withModelTime } from '../../platform/models/gateway.js';
import type { ToolSpec } from '../../platform/models/provider.js';
import {
  ChatTurnError,
  type ChatServiceDeps,
  type ChatServiceOptions,
  type PromptPreview,
  type PromptPreviewInput,
  type TurnEmitter,
} from './chat.types.js';
import { ChatTurns } from './chat.turn.js';

export class ChatService {
  private readonly turns: ChatTurns;

  constructor(
    private readonly d: ChatServiceDeps,
    opts: ChatServiceOptions,
  ) {
    this.turns = new ChatTurns(d, opts);
  }

  /** The tools the model may be offered in a chat turn (each protocol allows a subset). */
  toolCatalogue(): ToolSpec[] {
    return this.turns.toolSpecs;
  }

  /** One chatMessage. Resolves with the ids for the ack; throws ChatTurnError (already a chatError
   * payload) on any failure. */
  handleMessage(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    return this.timed('chatMessage', emit, (timedEmit) => this.turns.message(user, raw, timedEmit));
  }

  /** What a turn of this user would send now (no chat call, nothing stored). */
  previewPrompt(input: PromptPreviewInput): Promise<PromptPreview> {
    return this.turns.preview(input);
  }

  /** directNpcMessage: the named NPC answers, bypassing the group director. */
  handleDirectNpcMessage(
    user: UserPrincipal,
    raw: unknown,
    emit: TurnEmitter,
  ): Promise<{ conversationId: number; messageId: number }> {
    return this.timed('directNpcMessage', emit, (timedEmit) =>
      this.turns.directNpcMessage(user, raw, timedEmit),
    );
  }

  /** Runs a turn and records its latency (received → last response sent) and its model calls'
   * share in the metrics. */
  private async timed<T>(
    event: string,
    emit: TurnEmitter,
    turn: (emit: TurnEmitter) => Promise<T>,
  ): Promise<T> {
    let leave: () => void;
    try {
      leave = this.d.drain.enter(); // a draining node starts no turn: chatError 503
    } catch (err) {
      throw new ChatTurnError({ ...toProblem(err), conversationId: null, clientMessageId: null }, err);
    }
    try {
      return await traced('chat.turn', { 'chat.event': event }, () => this.measured(event, emit, turn), {
        sumUsage: true,
      });
    } finally {
      leave();
    }
  }

  private measured<T>(event: string, emit: TurnEmitter, turn: (emit: TurnEmitter) => Promise<T>): Promise<T> {
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
}
