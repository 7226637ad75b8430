// The suggestion endpoints (spec "Suggestion endpoints"; contract "Suggestions"): an access token
// for all of them; suggestions, config and history are the caller's own (history of another user:
// admins only; of an instance: its participants).
import { currentUser, type UserPrincipal } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import {
  channelParam,
  clearBody,
  clearResponse,
  configResponse,
  contextParam,
  executeBody,
  executeResponse,
  historyQuery,
  historyResponse,
  instanceParam,
  listQuery,
  listResponse,
  putBody,
  putConfigBody,
  suggestionParam,
  suggestionSchema,
  undoResponse,
  userParam,
} from './suggestions.schemas.js';
import type { SuggestionsService } from './suggestions.service.js';
import type { WorkflowActor } from './suggestions.types.js';

export interface SuggestionsRoutesOptions {
  suggestions: SuggestionsService;
}

const actorOf = (u: UserPrincipal): WorkflowActor => ({ id: u.id, name: u.name, admin: u.admin });

export function suggestionsRoutes(app: App, { suggestions }: SuggestionsRoutesOptions) {
  const tags = ['suggestions'];
  const actor = (req: Parameters<typeof currentUser>[0]) => actorOf(currentUser(req));

  app.get(
    '/api/suggestions/config',
    {
      schema: {
        tags,
        summary: 'Your auto-execution config, with the decision per action type',
        response: { 200: configResponse, ...problems(401) },
      },
    },
    async (req) => suggestions.configs.view(actor(req).id),
  );

  app.put(
    '/api/suggestions/config',
    {
      schema: {
        tags,
        summary: 'Change your auto-execution config (fields left out keep their values)',
        body: putConfigBody,
        response: { 200: configResponse, ...problems(400, 401) },
      },
    },
    async (req) => suggestions.configs.put(actor(req).id, req.body),
  );

  app.get(
    '/api/suggestions/history/user/:userId',
    {
      schema: {
        tags,
        summary: "A user's suggestion history, newest first (yourself; admins: anyone)",
        params: userParam,
        querystring: historyQuery,
        response: { 200: historyResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => ({
      history: await suggestions.historyOfUser(actor(req), req.params.userId, req.query.limit),
    }),
  );

  app.get(
    '/api/suggestions/history/instance/:instanceId',
    {
      schema: {
        tags,
        summary: "A workflow instance's suggestion history (participants; non-admins: their own)",
        params: instanceParam,
        querystring: historyQuery,
        response: { 200: historyResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => ({
      history: await suggestions.historyOfInstance(actor(req), req.params.instanceId, req.query.limit),
    }),
  );

  app.get(
    '/api/suggestions/history/:channelId',
    {
      schema: {
        tags,
        summary: "A chat-platform channel's suggestion history, newest first (non-admins: their own)",
        params: channelParam,
        querystring: historyQuery,
        response: { 200: historyResponse, ...problems(400, 401) },
      },
    },
    async (req) => ({
      history: await suggestions.historyOfChannel(actor(req), req.params.channelId, req.query.limit),
    }),
  );

  app.get(
    '/api/suggestions/:contextId',
    {
      schema: {
        tags,
        summary:
          "A context's active suggestions after a generation pass (at most 10), and what the pass executed by itself",
        params: contextParam,
        querystring: listQuery,
        response: { 200: listResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => suggestions.list(actor(req), req.params.contextId, req.query.message),
  );

  app.post(
    '/api/suggestions/:contextId/execute',
    {
      schema: {
        tags,
        summary: "Run a suggestion's action with your rights; a refused operation's problem passes through",
        params: contextParam,
        body: executeBody,
        response: { 200: executeResponse, ...problems(400, 401, 403, 404, 409, 422, 503) },
      },
    },
    async (req) => suggestions.execute(actor(req), req.params.contextId, req.body),
  );

  app.post(
    '/api/suggestions/:contextId/clear',
    {
      schema: {
        tags,
        summary: "Clear the context's open suggestions, or one (they expire)",
        params: contextParam,
        body: clearBody,
        response: { 200: clearResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => suggestions.clear(actor(req), req.params.contextId, req.body.suggestionId),
  );

  app.put(
    '/api/suggestions/:contextId/:id',
    {
      schema: {
        tags,
        summary: 'Accept or decline a suggestion, change its priority or custom fields',
        params: suggestionParam,
        body: putBody,
        response: { 200: suggestionSchema, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) => suggestions.put(actor(req), req.params.contextId, req.params.id, req.body),
  );

  app.post(
    '/api/suggestions/:contextId/:id/undo',
    {
      schema: {
        tags,
        summary: 'Undo a transition a suggestion executed by itself, within your undo window',
        params: suggestionParam,
        response: { 200: undoResponse, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) => suggestions.undo(actor(req), req.params.contextId, req.params.id),
  );
}
