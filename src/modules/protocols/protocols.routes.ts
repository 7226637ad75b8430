import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import { AppError, forbidden, zodErrors } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { assertMutable, type ProtocolsService } from './protocols.service.js';
import {
  createProtocolBody,
  protocolIdParam,
  protocolListResponse,
  protocolSchema,
  routingQuery,
  routingResponse,
  updateProtocolBody,
} from './protocols.schemas.js';

/** A definition that fails its schema is a bad definition (422 invalid_definition, as for the
 * checks the schema cannot express); bad params stay 400 validation_failed. The route keeps its
 * full body schema for OpenAPI and reports the failure itself (attachValidation). */
function rejectInvalidDefinition(
  req: FastifyRequest,
  schema: typeof createProtocolBody | typeof updateProtocolBody,
): void {
  const err = req.validationError;
  if (!err) return;
  if (req.validationError?.validationContext !== 'body') throw err;
  const parsed = schema.safeParse(req.body);
  const errors = parsed.success ? [{ path: 'body', message: err.message }] : zodErrors(parsed.error);
  throw new AppError('invalid_definition', 'The protocol definition does not validate', { errors });
}

export function protocolsRoutes(app: App, { protocols }: { protocols: ProtocolsService }) {
  const tags = ['protocols'];

  app.get(
    '/api/protocol/routing',
    {
      schema: {
        tags,
        summary: "The caller's protocol and why (admins may preview another user or persona type)",
        description:
          'Which protocol (system prompt and allowed tools) applies to the caller, in a channel when `channelId` is given, and which routing step decided it. Administrators may preview another user or persona type.',
        querystring: routingQuery,
        response: { 200: routingResponse, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const user = currentUser(req);
      const { userId, personaType, channelId } = req.query;
      // The persona type is the server's to know: a client-chosen persona must not buy TECH's
      // admin access (issue 5), so only admins may name one, and only to preview.
      if ((userId !== undefined || personaType !== undefined) && !user.admin)
        throw forbidden('Only administrators may preview routing for another user or persona type');
      const outcome = await protocols.routeUser(userId ?? user.id, { channelId, personaType });
      return {
        protocolId: outcome.protocolId,
        protocol: outcome.protocol,
        enforced: outcome.enforced,
        reason: outcome.reason,
      };
    },
  );

  app.get(
    '/api/protocol/protocols',
    {
      schema: {
        tags,
        summary: 'List protocols',
        description: 'Every protocol definition (the builtin ones and those administrators made).',
        response: { 200: protocolListResponse, ...problems(401) },
      },
    },
    async () => ({ protocols: await protocols.list() }),
  );

  app.get(
    '/api/protocol/protocols/:id',
    {
      schema: {
        tags,
        summary: 'Get a protocol definition',
        description: 'One protocol definition.',
        params: protocolIdParam,
        response: { 200: protocolSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => protocols.get(req.params.id),
  );

  app.post(
    '/api/protocol/protocols',
    {
      config: { auth: 'admin' },
      attachValidation: true,
      schema: {
        tags,
        summary: 'Create a protocol (a new id, or a new version of a family: _v2, _v3 …)',
        description:
          'Creates a protocol: a full template, or a base protocol plus overrides. A new version of a family takes the next id (`_v2`, `_v3`); routing uses the newest version. An invalid definition is 422. Administrators only.',
        body: createProtocolBody,
        response: { 201: protocolSchema, ...problems(400, 401, 403, 409, 422) },
      },
    },
    async (req, reply) => {
      // A new version of a ground-floor family is refused whatever else the body says.
      const id = (req.body as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') assertMutable(id);
      rejectInvalidDefinition(req, createProtocolBody);
      return reply.status(201).send(await protocols.create(req.body, currentUser(req).id));
    },
  );

  app.put(
    '/api/protocol/protocols/:id',
    {
      config: { auth: 'admin' },
      attachValidation: true,
      schema: {
        tags,
        summary: 'Replace a protocol definition (the id stays)',
        description:
          "Replaces a protocol's definition under the same id (an invalid one is 422). Administrators only.",
        params: protocolIdParam,
        body: updateProtocolBody,
        response: { 200: protocolSchema, ...problems(400, 401, 403, 404, 409, 422) },
      },
    },
    async (req) => {
      assertMutable(req.params.id);
      rejectInvalidDefinition(req, updateProtocolBody);
      return protocols.update(req.params.id, req.body, currentUser(req).id);
    },
  );

  // No protocol is ever deleted (routing, channels and workflows name them; the ground floor is
  // immutable): the method is refused for every id.
  app.delete(
    '/api/protocol/protocols/:id',
    {
      schema: {
        tags,
        summary: 'Not allowed: protocols are never deleted (405)',
        description:
          'Refused for every id and every signed-in caller: protocols are never deleted (routing, channels and workflows name them; the ground floor is immutable), so the answer is always 405 `method_not_allowed` with `Allow: GET, PUT`. Publish a new version instead.',
        // Any id: the path's id is documented, never checked (every id is refused alike).
        params: z.object({ id: z.string().meta({ examples: ['tech_protocol_v1'] }) }),
        response: { ...problems(401, 405) },
      },
    },
    async () => {
      throw new AppError(
        'method_not_allowed',
        'Protocols are never deleted; publish a new version instead',
        {},
        {
          allow: 'GET, PUT',
        },
      );
    },
  );
}
