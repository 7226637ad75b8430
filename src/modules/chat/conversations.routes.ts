import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import type { ConversationsService } from './conversations.service.js';
import {
  choiceSchema,
  choicesQuery,
  conversationSchema,
  createConversationBody,
  historyQuery,
  idParam,
  listConversationsQuery,
  messageSchema,
} from './chat.schemas.js';
import { presentConversation } from './conversations.service.js';

export function conversationRoutes(app: App, { conversations }: { conversations: ConversationsService }) {
  const tags = ['conversations'];

  app.post(
    '/api/conversations',
    {
      schema: {
        tags,
        summary: 'Start a conversation (optionally with NPCs)',
        description:
          'Starts a conversation of the caller, with the assistant alone or with up to ten NPCs (a group scene where a director picks who answers). Chat messages name it by `conversationId`.',
        body: createConversationBody,
        response: { 201: conversationSchema, ...problems(400, 401) },
      },
    },
    async (req, reply) =>
      reply.status(201).send(presentConversation(await conversations.create(currentUser(req).id, req.body))),
  );

  app.get(
    '/api/conversations',
    {
      schema: {
        tags,
        summary: "The caller's conversations, most recent first",
        description: "The caller's conversations, the most recently active first, with paging.",
        querystring: listConversationsQuery,
        response: {
          200: z.object({
            conversations: z.array(conversationSchema),
            total: z.number().int(),
            limit: z.number().int(),
            offset: z.number().int(),
          }),
          ...problems(400, 401),
        },
      },
    },
    async (req) => {
      const { rows, total } = await conversations.list(
        currentUser(req).id,
        req.query.limit,
        req.query.offset,
      );
      return {
        conversations: rows.map(presentConversation),
        total,
        limit: req.query.limit,
        offset: req.query.offset,
      };
    },
  );

  app.get(
    '/api/conversations/:id',
    {
      schema: {
        tags,
        summary: 'One of the caller’s conversations',
        description:
          "One conversation of the caller. Another user's conversation is 404, as if it did not exist.",
        params: idParam,
        response: { 200: conversationSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => presentConversation(await conversations.resolve(currentUser(req).id, req.params.id)),
  );

  app.delete(
    '/api/conversations/:id',
    {
      schema: {
        tags,
        summary: 'Delete one of the caller’s conversations and its messages',
        description:
          "Deletes one of the caller's conversations with its messages and suggested replies. Memories made from it stay (forget them under /api/memories).",
        params: idParam,
        response: { 204: noContent, ...problems(400, 401, 404) },
      },
    },
    async (req, reply) => {
      await conversations.remove(currentUser(req).id, req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/assistant/history',
    {
      schema: {
        tags: ['assistant'],
        summary:
          'Messages of a conversation (default: the caller’s conversation with the assistant), oldest first',
        description:
          "The messages of a conversation, oldest first (without `conversationId`: the caller's default conversation with the assistant). Page backwards with `before` (a message id).",
        querystring: historyQuery,
        response: { 200: z.object({ messages: z.array(messageSchema) }), ...problems(400, 401, 404) },
      },
    },
    async (req) => ({
      messages: await conversations.presentedHistory(
        currentUser(req).id,
        req.query.conversationId,
        req.query.limit,
        req.query.before,
      ),
    }),
  );

  app.get(
    '/api/assistant/choices',
    {
      schema: {
        tags: ['assistant'],
        summary: 'Suggested next replies produced with the last assistant response',
        description:
          'The suggested replies the model gave with its last response in the conversation (the default one without `conversationId`); empty when it gave none. Send one as the next chatMessage.',
        querystring: choicesQuery,
        response: { 200: z.object({ choices: z.array(choiceSchema) }), ...problems(400, 401, 404) },
      },
    },
    async (req) => ({ choices: await conversations.choices(currentUser(req).id, req.query.conversationId) }),
  );
}
