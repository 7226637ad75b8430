import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import { problems, type App } from '../../platform/http/types.js';
import { messageSchema, presentMessage } from '../chat/index.js';
import {
  createSessionBody,
  listSessionsQuery,
  personaSchema,
  personaSessionSchema,
  sessionHistoryQuery,
} from './persona.schemas.js';
import type { PersonaService } from './persona.service.js';

export interface PersonaRoutesOptions {
  persona: PersonaService;
}

export function personaRoutes(app: App, { persona }: PersonaRoutesOptions) {
  const tags = ['persona'];

  app.post(
    '/api/persona/session',
    {
      schema: {
        tags,
        summary:
          'Start a persona session with an observer (201), or resume the caller’s one for that observer and persona (200)',
        description:
          'Opens the caller’s session with the Observer, Sister or Worker persona of an observer (default: the root observer), with a conversation of its own; a second call for the same observer and persona resumes that session (200). Send its `id` as `personaSessionId` in `chatMessage` to talk to the persona. Only a CSO, an administrator or the observer’s owner may use an observer (else 403, unknown ids included); an allowed caller naming an id that is no observer gets 404.',
        body: createSessionBody,
        response: {
          200: personaSessionSchema,
          201: personaSessionSchema,
          ...problems(400, 401, 403, 404),
        },
      },
    },
    async (req, reply) => {
      const { session, created } = await persona.create(currentUser(req), req.body);
      return reply.status(created ? 201 : 200).send(session);
    },
  );

  app.get(
    '/api/persona/sessions',
    {
      schema: {
        tags,
        summary: 'The caller’s persona sessions, most recently active first',
        description:
          'Every persona session of the caller (never another user’s), most recently active first, optionally of one observer (`observerId`).',
        querystring: listSessionsQuery,
        response: { 200: z.object({ sessions: z.array(personaSessionSchema) }), ...problems(400, 401) },
      },
    },
    async (req) => ({ sessions: await persona.list(currentUser(req).id, req.query.observerId) }),
  );

  app.get(
    '/api/persona/chat/history',
    {
      schema: {
        tags,
        summary: 'Messages of one of the caller’s persona sessions, oldest first',
        description:
          'The latest `limit` messages (default 50) of the session’s conversation, oldest first; with `before`, those older than that message id (to page back). A session that is unknown or another user’s is 404.',
        querystring: sessionHistoryQuery,
        response: {
          200: z.object({ sessionId: z.uuid(), persona: personaSchema, messages: z.array(messageSchema) }),
          ...problems(400, 401, 404),
        },
      },
    },
    async (req) => {
      const { session, messages } = await persona.history(
        currentUser(req).id,
        req.query.sessionId,
        req.query.limit,
        req.query.before,
      );
      return {
        sessionId: session.id,
        persona: session.persona,
        messages: messages.map((m) =>
          presentMessage(m, new Map([[currentUser(req).id, currentUser(req).name]]), session.persona),
        ),
      };
    },
  );
}
