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
        description:
          'Stores a memory: content (chunked and embedded for search), a source and optional metadata. A user stores shared memories of their own (403 for another owner or source); administrators may write any source for any owner (world memories belong to the assistant). Content over MEMORY_MAX_CONTENT bytes is 400.',
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
        description:
          "Hybrid search (vector and full text, fused) over the caller's memories, the world tier and, with `npcUserId`, that character's core tier; results carry a similarity in [0, 1]. `conversationId` favours memories of that conversation. Administrators may search as another user.",
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
        description:
          'Memories of any user, filtered by owner and source, newest first, with paging. Administrators only.',
        querystring: adminListQuery,
        response: { 200: listResponse, ...problems(400, 401, 403) },
      },
    },
    async (req) => memory.adminList(req.query),
  );

  app.patch(
    '/api/admin/memories/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin', ...tags],
        summary: "Edit any user's memory (a character's trained knowledge, a player's)",
        description:
          'Edits the content and/or metadata of any memory, as PATCH /api/memories/{id} does for its owner: new content is chunked again and re-embedded in the background. Unknown id: 404. Administrators only.',
        params: memoryIdParam,
        body: patchMemoryBody,
        response: { 200: memorySchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => memory.patchAny(req.params.id, req.body),
  );

  app.delete(
    '/api/admin/memories/:id',
    {
      config: { auth: 'admin' },
      schema: {
        tags: ['admin', ...tags],
        summary: "Forget any user's memory",
        description:
          'Forgets any memory with its chunks and embeddings. Unknown id: 404. Administrators only.',
        params: memoryIdParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await memory.deleteAny(req.params.id);
      return reply.status(204).send(null);
    },
  );

  app.get(
    '/api/memories',
    {
      schema: {
        tags,
        summary: "The caller's own memories, newest first",
        description:
          "The caller's own memories, newest first, filtered by source, with paging. Superseded memories are listed too, marked in their metadata (`supersededBy`, `supersededAt`, `supersededReason`).",
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
        description:
          'Every memory of the caller as JSON lines (one Memory per line, oldest first), streamed as a file download.',
        response: {
          200: z.string().meta({
            description: 'one Memory object per line',
            examples: [
              '{"id":1024,"userId":42,"content":"Ada prefers short answers.","source":"shared","tier":"shared","metadata":{},"conversationId":null,"createdAt":"2025-05-01T09:30:00.000Z","updatedAt":"2025-05-01T09:30:00.000Z"}\n',
            ],
          }),
          ...problems(401),
        },
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
        description: "One of the caller's own memories; anyone else's is 404.",
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
        description:
          "Edits one of the caller's own memories: new content is chunked again and re-embedded in the background (full-text search finds it at once).",
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
        description:
          "Forgets one of the caller's own memories with its chunks and embeddings; anyone else's is 404.",
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
