// Players from a game server (contract: "Doors for games"): with an API key of scope
// players:write, the game server signs in the players it knows by its own ids and hands each
// client its tokens. One rate-limit window per key, apart from the sign-in routes' per IP.
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { clientTypeSchema, tokenResponse, type PlayersService } from '../auth/index.js';
import { profileSchema } from '../users/index.js';

const externalId = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .regex(/^[^\s/]+$/, 'no spaces or slashes')
  .describe("the game's own id of the player (a Steam id, a console account, its own login)");

export const playerBody = z
  .object({
    externalId,
    name: z.string().trim().min(1).max(100).optional().describe('the name the characters call the player'),
    clientType: clientTypeSchema.default('game_client').describe("the session's client type"),
  })
  .meta({ examples: [{ externalId: 'steam:76561198000000001', name: 'Ada', clientType: 'game_client' }] });

const playerSession = tokenResponse
  .extend({ created: z.boolean().describe('true when this call created the player') })
  .meta({ id: 'PlayerSession' });

/** The key (or admin) a request's window is counted for. */
function caller(req: FastifyRequest): string {
  const p = req.principal;
  return p ? `players:${p.kind}:${p.id}` : `players:ip:${req.ip}`;
}

export function playerRoutes(
  app: App,
  { players, playersPerMinute }: { players: PlayersService; playersPerMinute: number },
) {
  const tags = ['sync'];
  const config = {
    auth: { hybrid: 'players:write' as const },
    rateLimit: { max: playersPerMinute, timeWindow: 60_000, keyGenerator: caller },
  };

  app.post(
    '/api/sync/players',
    {
      config,
      schema: {
        tags,
        summary: 'Find or create the player a game knows by its own id, and sign it in',
        description:
          "For a game server: the player the game knows by `externalId` (the same one every time; created on first use as a password-less `carbon`/`public` account named `name`) gets a new session of `clientType` (default `game_client`). Hand `accessToken` and `refreshToken` to the game client: refresh, logout and the end of sessions work as for any session. A `name` different from the player's renames it. 201 when the player was created, 200 when found. An API key with players:write (or an administrator's token); `PLAYERS_RATE_LIMIT` calls a minute per key (429).",
        body: playerBody,
        response: { 200: playerSession, 201: playerSession, ...problems(400, 401, 403, 429) },
      },
    },
    async (req, reply) => {
      const session = await players.signIn(req.body, req.body.clientType);
      return reply.status(session.created ? 201 : 200).send(session);
    },
  );

  app.get(
    '/api/sync/players/:externalId',
    {
      config,
      schema: {
        tags,
        summary: 'One player by the game’s own id',
        description:
          'The profile of the player signed in under `externalId` (404 when the game never signed it in). An API key with players:write (or an administrator’s token).',
        params: z.object({ externalId: externalId.meta({ examples: ['steam:76561198000000001'] }) }),
        response: { 200: profileSchema, ...problems(400, 401, 403, 404, 429) },
      },
    },
    async (req) => players.get(req.params.externalId),
  );
}
