// A chat turn over plain HTTP (contract: "Doors for games"): POST /api/chat/turns runs the
// socket's turn for an engine that speaks no Socket.IO. With `Accept: text/event-stream` the
// turn's events stream as Server-Sent Events named as the socket's; otherwise one JSON answer
// when the turn is over.
import { PassThrough } from 'node:stream';
import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import {
  assistantResponseEvent,
  chatMessageSchema,
  directNpcMessageSchema,
  directNpcResponseEvent,
} from './chat.schemas.js';
import type { ChatService } from './chat.service.js';
import {
  namedEmitter,
  runTurn,
  safeWriter,
  sseFrame,
  turnFailure,
  type TurnEvent,
} from './turns.emitters.js';

const DIRECT_FIELDS = new Set(Object.keys(directNpcMessageSchema.shape));

export const turnBody = chatMessageSchema
  .extend({
    direct: z
      .boolean()
      .optional()
      .describe("true: a directNpcMessage turn (npcUserId's character answers, bypassing the director)"),
  })
  .superRefine((b, ctx) => {
    if (!b.direct) return;
    for (const key of Object.keys(b))
      if (key !== 'direct' && !DIRECT_FIELDS.has(key))
        ctx.addIssue({ code: 'custom', path: [key], message: 'not part of a direct message' });
  })
  .meta({
    examples: [
      { message: 'Good morning! I just got back from the coast.', clientMessageId: 'c0ffee-1' },
      { direct: true, npcUserId: 7, message: 'Is the forge lit?', clientMessageId: 'c0ffee-2' },
    ],
  });

const turnAnswer = z
  .object({
    conversationId: z.number().int(),
    messageId: z.number().int().describe("the stored user message's id"),
    replies: z
      .array(z.union([assistantResponseEvent, directNpcResponseEvent]))
      .describe('each assistantResponse of the turn (a direct turn: its directNpcResponse)'),
  })
  .meta({
    id: 'ChatTurn',
    examples: [
      {
        conversationId: 12,
        messageId: 344,
        replies: [
          {
            conversationId: 12,
            messageId: 345,
            npcUserId: 1,
            npcName: 'Assistant',
            text: 'Good morning! How did the trip go?',
            createdAt: '2025-05-01T09:30:00.000Z',
          },
        ],
      },
    ],
  });

/** How often a streamed turn sends an SSE comment, so proxies keep a slow turn's stream open. */
const KEEPALIVE_MS = 15_000;

export function turnRoutes(app: App, { chat }: { chat: ChatService }) {
  app.post(
    '/api/chat/turns',
    {
      schema: {
        tags: ['assistant'],
        summary: 'One chat turn over HTTP: Server-Sent Events, or one JSON answer',
        description:
          "The socket's `chatMessage` (or, with `direct: true`, its `directNpcMessage`) for a client that speaks no Socket.IO: the same turn, rate limit, `clientMessageId` idempotency and errors. With `Accept: text/event-stream` the answer is a stream of Server-Sent Events whose names and data are the socket's (`assistantThinking`, `assistantResponseDelta`, `assistantResponse`, `assistantIdle`; `npcThinking`, `directNpcResponse`; or `chatError`), closed by `ack` (the socket's acknowledgement: `{ ok, conversationId, messageId }` or `{ ok: false, error }`). Otherwise one JSON answer once the turn is over: its ids and replies, or the turn's problem+json with its status. A body that is not valid is 400 before any event. A player's access token.",
        body: turnBody,
        response: { 200: turnAnswer, ...problems(400, 401, 403, 404, 409, 415, 429, 503) },
      },
    },
    async (req, reply) => {
      const user = currentUser(req);
      const { direct, ...message } = req.body;
      const kind = direct ? 'direct' : 'message';
      if (!/\btext\/event-stream\b/.test(req.headers.accept ?? '')) {
        const replies: unknown[] = [];
        const emit = namedEmitter((e) => {
          if (e.event === 'assistantResponse' || e.event === 'directNpcResponse') replies.push(e.data);
        });
        const done = await runTurn(chat, req.log, user, kind, message, emit);
        if (!done.ok) throw turnFailure(done.error);
        return { conversationId: done.conversationId, messageId: done.messageId, replies } as z.infer<
          typeof turnAnswer
        >;
      }
      const stream = new PassThrough();
      const write = safeWriter(stream);
      const send = (e: TurnEvent) => write(sseFrame(e));
      void reply
        .header('content-type', 'text/event-stream; charset=utf-8')
        .header('cache-control', 'no-cache')
        .header('x-accel-buffering', 'no')
        .send(stream as never);
      const keepalive = setInterval(() => write(': keep-alive\n\n'), KEEPALIVE_MS);
      try {
        const done = await runTurn(chat, req.log, user, kind, message, namedEmitter(send));
        if (!done.ok) send({ event: 'chatError', data: done.error });
        send({ event: 'ack', data: done });
      } finally {
        clearInterval(keepalive);
        stream.end();
      }
      return reply;
    },
  );
}
