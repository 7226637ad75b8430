// `/api/observer/observer/<id>/…` (contract: "Observer"). Every route needs an access token; the
// service decides who may read the observer.
import { currentUser } from '../../platform/http/auth.js';
import { problems, type App } from '../../platform/http/types.js';
import { EXPORT_CONTENT_TYPE, EXPORT_STALL_MS, exportStream } from './observer.export.js';
import type { ObserverReflections } from './observer.reflection.js';
import {
  cycleResponse,
  observerIdParam,
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
    `${base}/timeline`,
    {
      schema: {
        tags,
        summary:
          'The unified timeline: the events of the observer and of the instances and observers below it, ' +
          'a page in (timelineAt, id) order; with `export=json|csv`, the whole filtered timeline (≤ 10,000 ' +
          'events) streamed as an attachment, `X-Export-Truncated` telling whether more matched',
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
        params: observerIdParam,
        response: { 200: rangeResponse, ...refusals },
      },
    },
    async (req) => observer.range(currentUser(req), req.params.id),
  );
}
