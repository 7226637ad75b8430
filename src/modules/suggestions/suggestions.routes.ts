// The suggestion endpoints (spec "Suggestion endpoints"; contract "Suggestions"): an access token
// for all of them; suggestions, config and history are the caller's own (history of another user:
// admins only; of an instance: its participants).
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
import { requestActor } from '../workflows/index.js';
import type { SuggestionsService } from './suggestions.service.js';

export interface SuggestionsRoutesOptions {
  suggestions: SuggestionsService;
}

export function suggestionsRoutes(app: App, { suggestions }: SuggestionsRoutesOptions) {
  const tags = ['suggestions'];
  const actor = requestActor;

  app.get(
    '/api/suggestions/config',
    {
      schema: {
        tags,
        summary: 'Your auto-execution config, with the decision per action type',
        description:
          'The caller’s auto-execution config (the defaults until they change it) and `decisions`: for each action type, whether a suggestion’s action of that type runs by itself, by the spec’s order (neverAutoExecute, the NEVER_AUTO safety class, requireConfirmationFor, then the action’s own flag).',
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
        description:
          'Changes the caller’s auto-execution config: the fields given replace theirs, the others keep their values; answers the whole config with its new `decisions`. Unknown fields or action types are 400.',
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
        description:
          'The suggestions made for a user in every context, whatever their status, newest first, at most `limit` (default 50). A user reads their own; another user’s history is for administrators only (else 403).',
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
        description:
          'The suggestions made about a workflow instance, newest first, at most `limit`: for those who may read the instance (else 404, as for the instance itself); non-admins see only the suggestions made for them.',
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
        description:
          'The suggestions made in a chat-platform channel, newest first, at most `limit`; non-admins see only the suggestions made for them, administrators everyone’s.',
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
        description:
          'Runs a generation pass for the caller in the context (a workflow instance id, `conversation:<id>` of the caller’s, or a chat-platform channel id): stale suggestions expire, new ones are made, and those the caller’s config lets run by themselves are executed (`autoExecuted`, with their results). Answers the active suggestions, at most 10, by priority, confidence and age. `message` is analysed for intent where the context has no workflow and no protocol. A context id that is none of these is 400; an instance or conversation the caller may not read, 404.',
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
        description:
          'Runs one of the actions an active or accepted suggestion offers (default the first), as the caller, through the same operation as its own endpoint; answers the executed suggestion, the operation’s result and the follow-up suggestions. A refused operation answers its own problem (403, 409, 422, 503…); a suggestion that is unknown or another user’s is 404, one no longer open 409.',
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
        description:
          'Expires (reason `cleared`) the caller’s open suggestions in the context, or only `suggestionId`; a cleared suggestion is not made again until the instance moves on. The body may be left out. Answers how many were cleared; a named suggestion that is unknown or another user’s is 404.',
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
        description:
          'Answers an active suggestion (`accepted` or `declined`; a declined one is not made again until the instance moves on), or changes an open one’s priority or merges custom fields into its metadata. Another move is 409 `invalid_transition` with the allowed ones; a suggestion no longer open, or changed meanwhile, 409. Unknown or another user’s: 404.',
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
        description:
          'Takes back a state transition that a suggestion executed automatically: the instance goes back to the state it left, if it has not changed since and the caller’s undo window (`undoWindowMinutes`) has not passed. Otherwise, or for any other suggestion or one already undone, 409. Unknown or another user’s: 404.',
        params: suggestionParam,
        response: { 200: undoResponse, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) => suggestions.undo(actor(req), req.params.contextId, req.params.id),
  );
}
