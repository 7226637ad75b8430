import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import { pageQuery } from '../../platform/http/pagination.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import type { CharactersService } from './characters.service.js';
import {
  characterStateSchema,
  idParam,
  npcBody,
  npcListResponse,
  npcSchema,
  playerQuestBody,
  playerQuestParams,
  playerQuestSchema,
  putStateBody,
  questBody,
  questListResponse,
  questSchema,
  relationshipBody,
  relationshipSchema,
} from './characters.schemas.js';

/** The most relationships one listing answers. */
const RELATIONSHIPS_MAX = 1000;

export function charactersRoutes(app: App, { characters }: { characters: CharactersService }) {
  const admin = { auth: 'admin' as const };
  const tags = ['characters'];

  app.post(
    '/api/admin/data/npcs',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create an NPC (a silicon + npc user with a profile)',
        description:
          'Creates a non-player character: a silicon + npc account with a profile (description, persona type, metadata such as specialties). NPCs speak in group conversations and take workflow tasks. Administrators only.',
        body: npcBody,
        response: { 201: npcSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await characters.createNpc(req.body)),
  );
  app.get(
    '/api/admin/data/npcs',
    {
      config: admin,
      schema: {
        tags,
        summary: 'List characters (the assistant and NPCs)',
        description: 'The characters: the assistant itself and every NPC, with paging. Administrators only.',
        querystring: pageQuery,
        response: { 200: npcListResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => ({
      ...(await characters.listNpcs(req.query)),
      limit: req.query.limit,
      offset: req.query.offset,
    }),
  );
  app.get(
    '/api/admin/data/npcs/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'One character',
        description: 'One character with its profile. Administrators only.',
        params: idParam,
        response: { 200: npcSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.getNpc(req.params.id),
  );
  app.put(
    '/api/admin/data/npcs/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: "Replace a character's name, description, persona type and metadata",
        description:
          "Replaces a character's name, description, persona type and metadata. Administrators only.",
        params: idParam,
        body: npcBody,
        response: { 200: npcSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.replaceNpc(req.params.id, req.body),
  );
  app.delete(
    '/api/admin/data/npcs/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete an NPC (the assistant itself cannot be deleted)',
        description:
          'Deletes an NPC and its account; the assistant itself cannot be deleted (409). Administrators only.',
        params: idParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      await characters.deleteNpc(req.params.id);
      return reply.status(204).send(null);
    },
  );
  app.get(
    '/api/admin/data/npcs/:id/state',
    {
      config: admin,
      schema: {
        tags,
        summary: "A character's state (persona, emotions, config)",
        description:
          "A character's state: persona, emotions and configuration, as the chat prompt and the world platform see them. Administrators only.",
        params: idParam,
        response: { 200: characterStateSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.getState(req.params.id),
  );
  app.put(
    '/api/admin/data/npcs/:id/state',
    {
      config: admin,
      schema: {
        tags,
        summary: "Change a character's state",
        description: "Replaces a character's state (persona, emotions, configuration). Administrators only.",
        params: idParam,
        body: putStateBody,
        response: { 200: characterStateSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.putState(req.params.id, req.body),
  );

  app.get(
    '/api/admin/data/relationships',
    {
      config: admin,
      schema: {
        tags,
        summary: `Relationships between players and characters, each as PUT answers it (at most ${RELATIONSHIPS_MAX}, by player then character)`,
        description: `Administrators only. The relationships of a player (\`userId\`), of a character (\`npcUserId\`), of both or of everyone: flags and affinity, ordered by player then character, at most ${RELATIONSHIPS_MAX}.`,
        querystring: z.object({
          userId: z.coerce.number().int().positive().optional(),
          npcUserId: z.coerce.number().int().positive().optional(),
        }),
        response: {
          200: z.object({ relationships: z.array(relationshipSchema) }).meta({
            examples: [
              {
                relationships: [
                  {
                    userId: 7,
                    npcUserId: 12,
                    npcName: 'Mira',
                    flags: { metAtHarbour: true, owesFavour: false },
                    affinity: 0.4,
                    updatedAt: '2025-05-01T09:30:00.000Z',
                  },
                ],
              },
            ],
          }),
          ...problems(400, 401, 403),
        },
      },
    },
    async (req) => ({
      relationships: await characters.relationships(
        req.query.userId,
        req.query.npcUserId,
        undefined,
        RELATIONSHIPS_MAX,
      ),
    }),
  );

  app.put(
    '/api/admin/data/relationships',
    {
      config: admin,
      schema: {
        tags,
        summary: "Set a player's relationship flags and affinity with a character",
        description:
          "Sets a player's relationship with a character: flags (named booleans) and an affinity from -1 to 1; only the fields given change. Administrators only.",
        body: relationshipBody,
        response: { 200: relationshipSchema, ...problems(400, 401, 403) },
      },
    },
    async (req) => characters.putRelationship(req.body),
  );

  app.post(
    '/api/admin/data/quests',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create a quest',
        description: 'Creates a quest players can take. Administrators only.',
        body: questBody,
        response: { 201: questSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await characters.createQuest(req.body)),
  );
  app.get(
    '/api/admin/data/quests',
    {
      config: admin,
      schema: {
        tags,
        summary: 'List quests',
        description: 'Every quest, with paging. Administrators only.',
        querystring: pageQuery,
        response: { 200: questListResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => ({
      ...(await characters.listQuests(req.query)),
      limit: req.query.limit,
      offset: req.query.offset,
    }),
  );
  app.get(
    '/api/admin/data/quests/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'One quest',
        description: 'One quest. Administrators only.',
        params: idParam,
        response: { 200: questSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.getQuest(req.params.id),
  );
  app.put(
    '/api/admin/data/quests/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Replace a quest',
        description: "Replaces a quest's title, description and metadata. Administrators only.",
        params: idParam,
        body: questBody,
        response: { 200: questSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.replaceQuest(req.params.id, req.body),
  );
  app.delete(
    '/api/admin/data/quests/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete a quest',
        description: "Deletes a quest and every player's status on it. Administrators only.",
        params: idParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await characters.deleteQuest(req.params.id);
      return reply.status(204).send(null);
    },
  );
  app.put(
    '/api/admin/data/quests/:id/players/:userId',
    {
      config: admin,
      schema: {
        tags,
        summary: "Set a player's status and progress on a quest",
        description:
          "Sets a player's status and progress on a quest (creating the player's entry). Administrators only.",
        params: playerQuestParams,
        body: playerQuestBody,
        response: { 200: playerQuestSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => characters.setPlayerQuest(req.params.id, req.params.userId, req.body),
  );

  app.get(
    '/api/admin/data/players/:id/quests',
    {
      config: admin,
      schema: {
        tags,
        summary: "A player's quests, with their status, progress and step",
        description:
          'The quests a player has (as GET /api/quests answers the player), for the console. Administrators only.',
        params: idParam,
        response: { 200: z.object({ quests: z.array(playerQuestSchema) }), ...problems(400, 401, 403) },
      },
    },
    async (req) => ({ quests: await characters.playerQuests(req.params.id) }),
  );

  app.get(
    '/api/quests',
    {
      schema: {
        tags: ['quests'],
        summary: "The caller's quests",
        description: 'The quests the caller has, with their status and progress.',
        response: { 200: z.object({ quests: z.array(playerQuestSchema) }), ...problems(401) },
      },
    },
    async (req) => ({ quests: await characters.playerQuests(currentUser(req).id) }),
  );
}
