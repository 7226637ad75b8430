// The OpenAI API as a door (contract: "Doors for games"): POST /v1/chat/completions and
// GET /v1/models as OpenAI defines them, with a player's access token as the API key. `model` is
// `assistant` or `npc:<id>`; the last user message is the turn's message; the turn is the
// socket's (memory, context, routing, storage), answered in OpenAI's shapes, errors included.
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import { AppError, validationFailed } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import type { CharactersService } from '../characters/index.js';
import type { ChatService } from './chat.service.js';
import {
  chunk,
  completion,
  modelName,
  openAiError,
  parseModel,
  turnText,
  type ModelTarget,
  type Reply,
} from './openai.rules.js';
import { namedEmitter, runTurn, safeWriter, sseFrame, turnFailure } from './turns.emitters.js';
import type { TurnEmitter } from './chat.types.js';

export type ModelDirectory = Pick<CharactersService, 'allNpcs' | 'getNpc'>;

const contentPart = z.object({ type: z.string(), text: z.string().optional() }).catchall(z.unknown());
const completionBody = z
  .object({
    model: z.string().min(1).max(100).describe('`assistant`, or `npc:<id>` for a character'),
    messages: z
      .array(
        z
          .object({
            role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
            content: z.union([z.string(), z.array(contentPart), z.null()]).optional(),
          })
          .catchall(z.unknown()),
      )
      .min(1)
      .max(1000),
    stream: z.boolean().nullish(),
  })
  .catchall(z.unknown())
  .meta({ examples: [{ model: 'npc:7', messages: [{ role: 'user', content: 'Is the forge lit?' }] }] });

const openAiErrorSchema = z
  .object({
    error: z.object({
      message: z.string(),
      type: z.string(),
      param: z.string().nullable(),
      code: z.string(),
    }),
  })
  .meta({
    id: 'OpenAiError',
    examples: [
      {
        error: {
          message: 'No model npc:99',
          type: 'not_found_error',
          param: 'model',
          code: 'model_not_found',
        },
      },
    ],
  });
const openAiErrors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, openAiErrorSchema])) as Record<number, typeof openAiErrorSchema>;

const modelSchema = z
  .object({ id: z.string(), object: z.literal('model'), created: z.number().int(), owned_by: z.string() })
  .meta({
    id: 'OpenAiModel',
    examples: [{ id: 'npc:7', object: 'model', created: 1746091800, owned_by: 'Mira' }],
  });

const completionSchema = z
  .object({
    id: z.string(),
    object: z.literal('chat.completion'),
    created: z.number().int(),
    model: z.string(),
    choices: z.array(
      z.object({
        index: z.number().int(),
        message: z.object({ role: z.literal('assistant'), content: z.string(), refusal: z.null() }),
        finish_reason: z.literal('stop'),
        logprobs: z.null(),
      }),
    ),
  })
  .meta({ id: 'OpenAiChatCompletion' });

const unknownModel = (model: string) =>
  new AppError('not_found', `No model ${model}: use assistant or npc:<id>`, {
    errors: [{ path: 'model', message: 'not a model of this service' }],
    openAiCode: 'model_not_found',
  });

/** The door's routes, in a context of their own whose errors leave in OpenAI's shape. */
export function openAiRoutes(
  app: App,
  { chat, characters }: { chat: ChatService; characters: ModelDirectory },
) {
  const tags = ['openai'];
  // Every error (the sign-in check's, validation's, the turn's) is sent as problem+json by the
  // app's handlers; this context rewrites it as OpenAI's error object.
  app.addHook('onSend', async (_req, reply, payload) => {
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/problem+json')) return payload;
    const problem = JSON.parse(String(payload)) as Parameters<typeof openAiError>[0] & {
      openAiCode?: string;
    };
    const body = openAiError(problem);
    if (problem.openAiCode) body.error.code = problem.openAiCode;
    void reply.type('application/json');
    return JSON.stringify(body);
  });

  const models = async () => {
    const npcs = await characters.allNpcs();
    const created = Math.floor(Date.now() / 1000);
    return [
      {
        id: 'assistant',
        object: 'model' as const,
        created,
        owned_by: npcs.find((n) => n.isAssistant)?.name ?? 'assistant',
      },
      ...npcs
        .filter((n) => !n.isAssistant)
        .map((n) => ({ id: `npc:${n.id}`, object: 'model' as const, created, owned_by: n.name })),
    ];
  };

  app.get(
    '/v1/models',
    {
      schema: {
        tags,
        summary: 'The characters as OpenAI models',
        description:
          "OpenAI's model list: `assistant` and each character as `npc:<id>` (`owned_by` is its name). A player's access token as the API key.",
        response: {
          200: z.object({ object: z.literal('list'), data: z.array(modelSchema) }),
          ...openAiErrors(401),
        },
      },
    },
    async () => ({ object: 'list' as const, data: await models() }),
  );

  app.get(
    '/v1/models/:model',
    {
      schema: {
        tags,
        summary: 'One character as an OpenAI model',
        description: '`assistant` or `npc:<id>`; 404 `model_not_found` for anything else.',
        params: z.object({
          model: z
            .string()
            .max(100)
            .meta({ examples: ['npc:7'] }),
        }),
        response: { 200: modelSchema, ...openAiErrors(401, 404) },
      },
    },
    async (req) => {
      const found = (await models()).find((m) => m.id === req.params.model);
      if (!found) throw unknownModel(req.params.model);
      return found;
    },
  );

  app.post(
    '/v1/chat/completions',
    {
      schema: {
        tags,
        summary: 'A chat turn in OpenAI’s shape (streamed with stream: true)',
        description:
          "OpenAI's chat completion for any client or engine plugin that speaks OpenAI: the base URL is this service's `/v1` and the API key a player's access token. `model` is `assistant` or `npc:<id>` (GET /v1/models); the last message must be the user's, and is the turn's message: the service keeps the conversation itself (history, memories, the character's system prompt), so the earlier messages are not sent on. `assistant` turns run in the player's default conversation; `npc:<id>` is a direct message to that character. The turn is stored like any other, under the same rate limit; an `Idempotency-Key` header is the turn's `clientMessageId` (a retry is answered from the stored reply). With `stream: true`, `chat.completion.chunk` Server-Sent Events end with `data: [DONE]`. Errors are OpenAI's `{ error: { message, type, param, code } }`.",
        headers: z.object({ 'idempotency-key': z.string().min(1).max(100).optional() }),
        body: completionBody,
        response: { 200: completionSchema, ...openAiErrors(400, 401, 404, 409, 429, 503) },
      },
    },
    async (req, reply) => {
      const user = currentUser(req);
      const target = parseModel(req.body.model);
      if (!target) throw unknownModel(req.body.model);
      const text = turnText(req.body.messages);
      if (text === undefined)
        throw validationFailed([
          { path: 'messages', message: "the last message must be the user's, with text" },
        ]);
      const model = modelName(target);
      const stream = req.body.stream === true;
      const raw = turnPayload(target, text, req.headers['idempotency-key'], stream);
      const kind = target.kind === 'npc' ? 'direct' : 'message';
      if (!stream) {
        const replies: Reply[] = [];
        const emit = namedEmitter((e) => {
          if (e.event === 'assistantResponse' || e.event === 'directNpcResponse')
            replies.push(e.data as Reply);
        });
        const done = await runTurn(chat, req.log, user, kind, raw, emit);
        if (!done.ok) throw turnFailure(done.error);
        return completion(model, done.messageId, replies);
      }
      const out = new ChunkStream(reply, model);
      const done = await runTurn(chat, req.log, user, kind, raw, out.emitter());
      // Refused before its first word: an HTTP error as for a whole answer.
      if (!done.ok && !out.started) throw turnFailure(done.error);
      out.finish(done.ok ? undefined : openAiError(done.error));
      return reply;
    },
  );
}

/** The turn's payload: a chatMessage to the assistant, or a directNpcMessage to a character. */
function turnPayload(target: ModelTarget, message: string, key: string | undefined, stream: boolean) {
  const common = { message, ...(key ? { clientMessageId: key } : {}), preferences: { stream } };
  return target.kind === 'npc' ? { ...common, npcUserId: target.npcUserId } : common;
}

/** A turn written as `chat.completion.chunk` events: the stream begins with the first text (so a
 * refusal before it is still an HTTP error); each reply's text once, streamed pieces first and
 * the rest of the stored reply after them; the end's `finish_reason` and `[DONE]`, or an error. */
class ChunkStream {
  started = false;
  private readonly out = new PassThrough();
  private readonly write = safeWriter(this.out);
  private id = '';
  private readonly created = Math.floor(Date.now() / 1000);
  /** The text sent of each reply, by its message id. */
  private readonly sent = new Map<number, string>();

  constructor(
    private readonly reply: FastifyReply,
    private readonly model: string,
  ) {}

  emitter(): TurnEmitter {
    return namedEmitter((e) => {
      if (e.event === 'assistantResponseDelta') {
        const d = e.data as { messageId: number; delta: string };
        this.text(d.messageId, d.delta);
      } else if (e.event === 'assistantResponse' || e.event === 'directNpcResponse') {
        const r = e.data as Reply;
        const sent = this.sent.get(r.messageId) ?? '';
        this.text(r.messageId, r.text.startsWith(sent) ? r.text.slice(sent.length) : '');
      }
    });
  }

  private text(messageId: number, content: string) {
    this.begin(messageId);
    if (!this.sent.has(messageId) && this.sent.size > 0) content = `\n\n${content}`;
    this.sent.set(messageId, (this.sent.get(messageId) ?? '') + content);
    if (content) this.send(chunk(this.id, this.model, this.created, { content }));
  }

  private begin(messageId: number) {
    if (this.started) return;
    this.started = true;
    this.id = `chatcmpl-${messageId}`;
    void this.reply
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('x-accel-buffering', 'no')
      .send(this.out);
    this.send(chunk(this.id, this.model, this.created, { role: 'assistant', content: '' }));
  }

  private send(data: unknown) {
    this.write(sseFrame({ data }));
  }

  finish(error: ReturnType<typeof openAiError> | undefined) {
    this.begin(0);
    if (error) this.send(error);
    else {
      this.send(chunk(this.id, this.model, this.created, {}, 'stop'));
      this.write('data: [DONE]\n\n');
    }
    this.out.end();
  }
}
