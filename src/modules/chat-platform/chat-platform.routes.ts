import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { currentUser } from '../../platform/http/auth.js';
import { problemOf, sendProblem } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import { actorOf } from '../workflows/index.js';
import type { ChatPlatformCommands } from './chat-platform.commands.js';
import { problemText } from './chat-platform.messages.rules.js';
import type { ChatPlatformService } from './chat-platform.service.js';
import {
  channelConfigBody,
  channelConfigSchema,
  channelIdParam,
  commandBody,
  commandProblemSchema,
  commandResponse,
  linkBody,
  linkListQuery,
  linkListResponse,
  linkSchema,
  platformUserParam,
} from './chat-platform.schemas.js';

export interface ChatPlatformRoutesOptions {
  chatPlatform: ChatPlatformService;
  chatPlatformCommands: ChatPlatformCommands;
}

/** The command route's refusals, its authentication's included: the problem every route would
 * answer, plus the chat's `text`. */
function commandErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const { problem, headers } = problemOf(err, request, reply);
  const text = typeof problem.text === 'string' ? problem.text : problemText(problem);
  void sendProblem(reply, { ...problem, text }, headers);
}

export function chatPlatformRoutes(
  app: App,
  { chatPlatform, chatPlatformCommands }: ChatPlatformRoutesOptions,
) {
  const tags = ['chat-platform'];

  app.get(
    '/api/chat-platform/channel/config/:channelId',
    {
      schema: {
        tags,
        summary: "A chat-platform channel's configuration",
        description:
          "A chat-platform channel's configuration: the protocol pinned to it, if any (404 for a channel never configured).",
        params: channelIdParam,
        response: { 200: channelConfigSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => chatPlatform.getChannelConfig(req.params.channelId),
  );

  app.post(
    '/api/chat-platform/channel/config',
    {
      // the API contract: channel-configuration writes need an admin.
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: "Set a channel's protocol (overrides routing except for core_primary accounts)",
        description:
          'Pins a protocol to a chat-platform channel: conversations there use it, except for core_primary accounts, whose own protocol wins. Administrators only.',
        body: channelConfigBody,
        response: { 200: channelConfigSchema, ...problems(400, 401, 403) },
      },
    },
    async (req) => chatPlatform.setChannelConfig(req.body, currentUser(req).id),
  );

  const commandProblems = Object.fromEntries(
    [400, 401, 403, 404, 409, 503].map((s) => [s, commandProblemSchema]),
  ) as Record<number, typeof commandProblemSchema>;

  app.post(
    '/api/chat-platform/commands',
    {
      config: { auth: { hybrid: 'chat-platform:command' } },
      errorHandler: commandErrorHandler,
      schema: {
        tags,
        summary:
          "Run a workflow command as the admin token's user, or (API key with chat-platform:command) as the account platformUserId is linked to",
        description:
          'Commands: /observer-instance, /observer-transition, /observer-approve, /observer-evidence, ' +
          '/observer-artifacts, /observer-assign, /observer-artifact-view, /observer-artifact-review, ' +
          '/observer-orchestrate. Each runs the same operation as its REST route, with the same access ' +
          'rules; a refusal is that route’s problem plus `text`. A command has no expectedVersion: it ' +
          'acts on the instance as it is.',
        body: commandBody,
        response: { 200: commandResponse, ...commandProblems },
      },
    },
    async (req) => {
      const p = req.principal!;
      const caller =
        p.kind === 'user'
          ? ({ kind: 'user', actor: actorOf(p) } as const)
          : ({ kind: 'platformUser', platformUserId: req.body.platformUserId } as const);
      return chatPlatformCommands.run(caller, req.body);
    },
  );

  // ---- linked platform users (admin) -----------------------------------------------------

  app.get(
    '/api/admin/chat-platform/users',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Chat-platform users linked to accounts, by platform user id',
        description:
          'The chat-platform users linked to accounts, filtered by account, with paging. Administrators only.',
        querystring: linkListQuery,
        response: { 200: linkListResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => chatPlatform.listLinks(req.query),
  );

  app.get(
    '/api/admin/chat-platform/users/:platformUserId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'The account a chat-platform user is linked to',
        description:
          'The account a chat-platform user is linked to (404 when not linked). Administrators only.',
        params: platformUserParam,
        response: { 200: linkSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => chatPlatform.getLink(req.params.platformUserId),
  );

  app.put(
    '/api/admin/chat-platform/users/:platformUserId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary:
          'Link a chat-platform user to an account (201) or relink it (200): its commands then run with that account’s rights',
        description:
          "Links a chat-platform user to an account (201) or relinks it (200): that user's commands then run with the account's rights as they are at each command. Administrators only.",
        params: platformUserParam,
        body: linkBody,
        response: { 200: linkSchema, 201: linkSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const { link, created } = await chatPlatform.putLink(
        req.params.platformUserId,
        req.body.userId,
        currentUser(req).id,
      );
      return reply.status(created ? 201 : 200).send(link);
    },
  );

  app.delete(
    '/api/admin/chat-platform/users/:platformUserId',
    {
      config: { auth: 'admin' },
      schema: {
        tags,
        summary: 'Unlink a chat-platform user (its commands are then refused)',
        description:
          'Unlinks a chat-platform user: its commands are refused from then on. Administrators only.',
        params: platformUserParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await chatPlatform.deleteLink(req.params.platformUserId);
      return reply.status(204).send(null);
    },
  );
}
