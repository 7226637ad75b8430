// `/api/observer/observers` (the observers the caller may read) and `/api/observer/observer/<id>/…`
// (contract: "Observer"). Every route needs an access token; the service decides who may read
// the observer.
import { currentUser } from '../../platform/http/auth.js';
import { problems, type App } from '../../platform/http/types.js';
import { EXPORT_CONTENT_TYPE, EXPORT_STALL_MS, exportStream } from './observer.export.js';
import type { ObserverReflections } from './observer.reflection.js';
import {
  cycleResponse,
  observerIdParam,
  observersResponse,
  paginatedQuery,
  paginatedResponse,
  rangeResponse,
  reconstructQuery,
  reconstructResponse,
  reflectionBody,
  reflectionResponse,
  stateQuery,
  stateResponse,
  summaryQuery,
  summarySchema,
  timelinePageResponse,
  timelineQuery,
} from './observer.schemas.js';
import type { ObserverService } from './observer.service.js';

export interface ObserverRoutesOptions {
  observer: ObserverService;
  reflections: ObserverReflections;
}

export function observerRoutes(app: App, { observer, reflections }: ObserverRoutesOptions) {
  const tags = ['observer'];
  const base = '/api/observer/observer/:id';
  const refusals = problems(400, 401, 403, 404);

  app.get(
    '/api/observer/observers',
    {
      schema: {
        tags,
        summary: 'The observers the caller may read: every one for a CSO or an administrator, else their own',
        description:
          'The Level-8 instances the caller may observe, by id: every one for a CSO or an administrator, otherwise those whose `userId` is the caller (none: an empty list, not a refusal). The list the console picks an observer from.',
        response: { 200: observersResponse, ...problems(401) },
      },
    },
    async (req) => ({ observers: await observer.observers(currentUser(req)) }),
  );

  app.get(
    `${base}/timeline`,
    {
      schema: {
        tags,
        summary:
          'The unified timeline: the events of the observer and of the instances and observers below it, ' +
          'a page in (timelineAt, id) order; with `export=json|csv`, the whole filtered timeline (≤ 10,000 ' +
          'events) streamed as an attachment, `X-Export-Truncated` telling whether more matched',
        description:
          "The observer's events and those of the observers below it (the root: every event), newest first by default. Filters: `eventType`, `source`, `personaId` (any of; repeat or comma-separate), `instanceId`, `userId`, `from` (inclusive) and `to` (exclusive) on `timelineAt`, `q` (full text: every word, any case). Follow `nextCursor` for the next page; a cursor of other filters is 400. With `export=json|csv` the whole filtered timeline (at most 10,000 events) is streamed as an attachment from a database cursor, CSV with a formula guard. A CSO, an administrator or the observer's owner.",
        params: observerIdParam,
        querystring: timelineQuery,
        response: {
          200: timelinePageResponse.describe(
            'a page; an export is instead { observerId, exportedAt, truncated, events } or text/csv',
          ),
          ...refusals,
        },
      },
    },
    async (req, reply) => {
      const user = currentUser(req);
      const format = req.query.export;
      if (!format) return observer.timeline(user, req.params.id, req.query);
      const out = await observer.export(user, req.params.id, req.query);
      // A client that stops reading without closing would hold the export's cursor (on
      // PostgreSQL, a connection of the pool): a minute without a byte moving ends it.
      reply.raw.setTimeout(EXPORT_STALL_MS, () => reply.raw.destroy());
      return reply
        .type(EXPORT_CONTENT_TYPE[format])
        .header('x-export-truncated', String(out.truncated))
        .header('content-disposition', `attachment; filename="observer-${out.observerId}-timeline.${format}"`)
        .send(exportStream(format, out, out.events) as never);
    },
  );

  app.get(
    `${base}/timeline/paginated`,
    {
      schema: {
        tags,
        summary: 'The unified timeline by numbered pages, with the total (past the end: no events)',
        description:
          "The same filtered timeline by page number, with `total` and `totalPages`; a page past the end has no events. A CSO, an administrator or the observer's owner.",
        params: observerIdParam,
        querystring: paginatedQuery,
        response: { 200: paginatedResponse, ...refusals },
      },
    },
    async (req) => observer.paginated(currentUser(req), req.params.id, req.query),
  );

  app.post(
    `${base}/reflection`,
    {
      schema: {
        tags,
        summary:
          'Reflect on the newest events of the last hours (one model call; offline, a deterministic digest), ' +
          'stored as an observer_reflection memory; 200 with a null reflection when there are no events',
        description:
          "One chat call over the observer's newest `limit` events of the last `hours` (reflections left out), oldest first; stored as an `observer_reflection` memory of the assistant and a `reflection_generated` event, and sent as `reflection_generated` on `/observer`. Offline, a deterministic digest. A model failure is 503 and stores nothing. A CSO, an administrator or the observer's owner.",
        params: observerIdParam,
        body: reflectionBody,
        response: { 200: reflectionResponse, 201: reflectionResponse, ...problems(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => {
      const out = await reflections.reflect(currentUser(req), req.params.id, req.body);
      return reply.status(out.reflection ? 201 : 200).send(out);
    },
  );

  app.post(
    `${base}/cycle`,
    {
      schema: {
        tags,
        summary:
          'Run the cycle: gather, reflect, store, meta_state, each with its outcome (a failed model call ' +
          'fails its step, not the request); then summary_update',
        description:
          "Gathers the window's events, reflects, stores the reflection and updates the meta-state, reporting each step (`ok`, `skipped` without events, `failed`); a failed model call fails its step and the cycle's outcome, not the request. Then `summary_update` on `/observer`. A CSO, an administrator or the observer's owner.",
        params: observerIdParam,
        body: reflectionBody,
        response: { 200: cycleResponse, ...refusals },
      },
    },
    async (req) => reflections.cycle(currentUser(req), req.params.id, req.body),
  );

  app.get(
    `${base}/summary`,
    {
      schema: {
        tags,
        summary:
          'Instance and event statistics, diary compliance and the meta-state (the summary_update payload)',
        description:
          "The observer's instances (total, active, by level, source and persona), its events (in all, in the last `hours`, and the window's by source, type, level and persona), diary compliance of its active Level-5 instances, and its meta-state. A CSO, an administrator or the observer's owner.",
        params: observerIdParam,
        querystring: summaryQuery,
        response: { 200: summarySchema, ...refusals },
      },
    },
    async (req) => observer.summary(currentUser(req), req.params.id, req.query.hours),
  );

  app.get(
    `${base}/5d-navigation/state`,
    {
      schema: {
        tags,
        summary:
          'The state at a time: instances and their activity, balances and items rebuilt from the economy ledger, ' +
          'the newest events',
        description:
          "The observer as it was at `at` (a future time is now): its instances created by then with their `isActive` then, their owners' and `userId`'s coins and items rebuilt from the economy ledger (a change a microsecond later is not in it), its newest events up to `at` and their count. A CSO, an administrator or the observer's owner; on an observer below the root, its owner sees only the users its instances concern (who owns it or one of its instances, whom its events name): any other `userId` is left out of `users`, as one that does not exist is.",
        params: observerIdParam,
        querystring: stateQuery,
        response: { 200: stateResponse, ...refusals },
      },
    },
    async (req) => observer.stateAt(currentUser(req), req.params.id, req.query),
  );

  app.get(
    `${base}/5d-navigation/reconstruct`,
    {
      schema: {
        tags,
        summary:
          'Awareness reconstructed at a time: the last reflection, memories, timeline figures, instances',
        description:
          "The observer's awareness at `at`: its last reflection by then, the memories about it (newest first), its timeline's count, first and last time and types, its instances (total and active then). A CSO, an administrator or the observer's owner; on an observer below the root, its owner sees only the assistant's memories (its reflections) and those of the users its instances concern.",
        params: observerIdParam,
        querystring: reconstructQuery,
        response: { 200: reconstructResponse, ...refusals },
      },
    },
    async (req) => observer.reconstruct(currentUser(req), req.params.id, req.query),
  );

  app.get(
    `${base}/5d-navigation/range`,
    {
      schema: {
        tags,
        summary: 'The first and last timelineAt of the timeline (null when empty), and its size',
        description:
          "The first and last `timelineAt` of the observer's timeline (null when it is empty) and how many events it holds: the span 5D navigation can move in. A CSO, an administrator or the observer's owner.",
        params: observerIdParam,
        response: { 200: rangeResponse, ...refusals },
      },
    },
    async (req) => observer.range(currentUser(req), req.params.id),
  );
}
