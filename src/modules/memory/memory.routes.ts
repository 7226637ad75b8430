// Memory endpoints (contract: "Memory"): write and search under /api/assistant/memory, the
// admin listing, and the caller's own memories under /api/memories (another user's memory: 404).
import { Readable } from 'node:stream';
import { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import {
  adminListQuery,
  createMemoryBody,
  listResponse,
  memoryIdParam,
  memorySchema,
  ownListQuery,
  patchMemoryBody,
  searchQuery,
  searchResponse,
} from './memory.schemas.js';
import { toSearchResult } from './memory.mapping.js';
import type { MemoryService } from './memory.service.js';

export function memoryRoutes(app: App, { memory }: { memory: MemoryService }) {
  const tags = ['memory'];

  app.post(
    '/api/assistant/memory',
    {
      schema: {
        tags,
        summary: 'Store a memory (non-admins: shared memories of their own; admins: any source, any owner)',
        body: createMemoryBody,
        response: { 201: memorySchema, ...problems(400, 401, 403, 409) },
      },
    },
    async (req, reply) => {
      const user = currentUser(req);
      return reply.status(201).send(await memory.create({ id: user.id, admin: user.admin }, req.body));
    },
  );

  app.get(
    '/api/assistant/memory',
    {
      schema: {
        tags,
        summary:
          "Search memories: the user's own, the world tier, and an NPC's core tier, by fused relevance",
        querystring: searchQuery,
        response: { 200: searchResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => {
      const user = currentUser(req);
      const found = await memory.search({ id: user.id, admin: user.admin }, req.query);
      return { memories: found.map(toSearchResult) };
    },
  );

  app.get(
    '/api/admin/memories',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin', ...tags],
        summary: 'List memories of any user',
        querystring: adminListQuery,
        response: { 200: listResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => memory.adminList(req.query),
  );

  app.get(
    '/api/memories',
    {
      schema: {
        tags,
        summary: "The caller's own memories, newest first",
        querystring: ownListQuery,
        response: { 200: listResponse, ...problems(400, 401) },
      },
    },
    async (req) => memory.listOwn(currentUser(req).id, req.query),
  );

  app.get(
    '/api/memories/export',
    {
      schema: {
        tags,
        summary: "Export the caller's own memories as JSON lines (application/x-ndjson), oldest first",
        response: { 200: z.string().describe('one Memory object per line'), ...problems(401) },
      },
    },
    async (req, reply) => {
      const lines = memory.exportOwn(currentUser(req).id);
      return (
        reply
          .type('application/x-ndjson; charset=utf-8')
          .header('content-disposition', 'attachment; filename="memories.jsonl"')
          // A stream, not the schema's string: the export can be larger than memory should hold.
          .send(Readable.from(lines) as never)
      );
    },
  );

  app.get(
    '/api/memories/:id',
    {
      schema: {
        tags,
        summary: 'One of your own memories',
        params: memoryIdParam,
        response: { 200: memorySchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => memory.getOwn(currentUser(req).id, req.params.id),
  );

  app.patch(
    '/api/memories/:id',
    {
      schema: {
        tags,
        summary: 'Edit one of your own memories (new content is re-embedded in the background)',
        params: memoryIdParam,
        body: patchMemoryBody,
        response: { 200: memorySchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => memory.patchOwn(currentUser(req).id, req.params.id, req.body),
  );

  app.delete(
    '/api/memories/:id',
    {
      schema: {
        tags,
        summary: 'Forget one of your own memories',
        params: memoryIdParam,
        response: { 204: noContent, ...problems(400, 401, 404) },
      },
    },
    async (req, reply) => {
      await memory.deleteOwn(currentUser(req).id, req.params.id);
      return reply.status(204).send(null);
    },
  );
}
