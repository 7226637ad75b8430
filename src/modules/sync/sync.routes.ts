import type { FastifyRequest } from 'fastify';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { SyncService } from './sync.service.js';
import { idempotencyClaim, idempotencyHeaders, REPLAYED_HEADER } from '../../platform/http/idempotency.js';
import { timelineEventSchema } from '../timeline/index.js';
import { ingestBody, universalStateQuery, universalStateSchema } from './sync.schemas.js';

/** Idempotency keys are scoped per caller: an admin's token or an API key. */
function caller(req: FastifyRequest): string {
  const p = req.principal!;
  return `${p.kind}:${p.id}`;
}

export function syncRoutes(app: App, { sync }: { sync: SyncService }) {
  const tags = ['sync'];

  app.get(
    '/api/sync/universal-state',
    {
      config: { auth: { hybrid: 'sync:read' } },
      schema: {
        tags,
        summary:
          "The assistant's state; with userId, that player's memories, timeline, inventory, quests and relationships",
        description:
          "For a world platform: the assistant's state and emotions and, with `userId`, that player's newest memories and timeline events, inventory, quests and relationships (`limit` each). An administrator's token, or an API key with sync:read.",
        querystring: universalStateQuery,
        response: { 200: universalStateSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => sync.universalState(req.query.userId, req.query.limit),
  );

  app.post(
    '/api/sync/ingest-event',
    {
      config: { auth: { hybrid: 'sync:write' } },
      schema: {
        tags,
        summary:
          'Write a timeline event (broadcast to its observer); Idempotency-Key replays the first answer',
        description:
          "For a world platform: writes a timeline event (enriched with its instance and broadcast to the instance's observer). Send an `Idempotency-Key` to make retries safe. An administrator's token, or an API key with sync:write.",
        headers: idempotencyHeaders,
        body: ingestBody,
        response: { 201: timelineEventSchema, ...problems(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const claim = idempotencyClaim(
        caller(req),
        'POST /api/sync/ingest-event',
        req.headers['idempotency-key'],
        req.body,
      );
      const { value, replayed } = await sync.ingest(req.body, claim);
      if (replayed) void reply.header(REPLAYED_HEADER, 'true');
      return reply.status(201).send(value);
    },
  );
}
