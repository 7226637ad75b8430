import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import type { InstancesService } from './instances.service.js';
import { instanceSchema } from './timeline.schemas.js';
import {
  createInstanceBody,
  instanceIdParam,
  instanceListResponse,
  listInstancesQuery,
  patchInstanceBody,
} from './instances.schemas.js';

export function instancesRoutes(app: App, { instances }: { instances: InstancesService }) {
  const config = { auth: 'admin' as const };
  const tags = ['instances'];

  app.post(
    '/api/admin/instances',
    {
      config,
      schema: {
        tags,
        summary: 'Register a Level-5 or Level-8 instance (creates a timeline event)',
        description:
          "Registers a Level-8 observer or a Level-5 instance under one, records an `instance_registered` timeline event and broadcasts it to the observer's watchers. Administrators only.",
        body: createInstanceBody,
        response: { 201: instanceSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await instances.create(req.body, currentUser(req).id)),
  );

  app.get(
    '/api/admin/instances',
    {
      config,
      schema: {
        tags,
        summary: 'List instances',
        description:
          'Registered instances, filtered by level, source, activity and parent, with paging. Administrators only.',
        querystring: listInstancesQuery,
        response: { 200: instanceListResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => ({
      ...(await instances.list(req.query)),
      limit: req.query.limit,
      offset: req.query.offset,
    }),
  );

  app.get(
    '/api/admin/instances/:id',
    {
      config,
      schema: {
        tags,
        summary: 'One instance',
        description: 'One registered instance. Administrators only.',
        params: instanceIdParam,
        response: { 200: instanceSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => instances.get(req.params.id),
  );

  app.patch(
    '/api/admin/instances/:id',
    {
      config,
      schema: {
        tags,
        summary: 'Change an instance (isActive, metadata, …); activity changes are broadcast',
        description:
          "Changes an instance's name, activity, persona, channel or metadata; an activity change is broadcast as `instance_activity` to its observer's watchers. Administrators only.",
        params: instanceIdParam,
        body: patchInstanceBody,
        response: { 200: instanceSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => instances.patch(req.params.id, req.body),
  );
}
