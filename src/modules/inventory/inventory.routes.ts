import { z } from 'zod';
import { currentUser, selfOrAdmin } from '../../platform/http/auth.js';
import type { App } from '../../platform/http/types.js';
import { noContent, problems } from '../../platform/http/types.js';
import type { InventoryService } from './inventory.service.js';
import { idempotencyClaim, idempotencyHeaders, REPLAYED_HEADER } from '../../platform/http/idempotency.js';
import {
  idParam,
  inventorySchema,
  itemBody,
  itemListResponse,
  itemSchema,
  itemsQuery,
  modifyBody,
} from './inventory.schemas.js';

export function inventoryRoutes(app: App, { inventory }: { inventory: InventoryService }) {
  const tags = ['inventory'];
  const admin = { auth: 'admin' as const };

  app.get(
    '/api/inventory',
    {
      schema: {
        tags,
        summary: "The caller's items and energy coin balance (admins may name another userId)",
        description:
          "The caller's items with quantities and their energy coin balance. Administrators may read another user's with `userId`; others get 403 for anyone but themselves.",
        querystring: z.object({ userId: z.coerce.number().int().positive().optional() }),
        response: { 200: inventorySchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => inventory.inventory(selfOrAdmin(currentUser(req), req.query.userId)),
  );

  app.post(
    '/api/inventory/modify',
    {
      config: admin,
      schema: {
        tags,
        summary:
          "Change a user's item quantity or energy coins (rules 1-2); Idempotency-Key replays the first answer",
        description:
          'Adds or removes items or energy coins of a user. A change never takes a balance or a quantity below zero (409 `insufficient_funds`); every change is written to the economy ledger. Send an `Idempotency-Key`: a retry replays the first answer instead of changing twice. Administrators only.',
        headers: idempotencyHeaders,
        body: modifyBody,
        response: { 200: inventorySchema, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const user = currentUser(req);
      const claim = idempotencyClaim(
        `user:${user.id}`,
        'POST /api/inventory/modify',
        req.headers['idempotency-key'],
        req.body,
      );
      const { value, replayed } = await inventory.adminModify(req.body, user.id, claim);
      if (replayed) void reply.header(REPLAYED_HEADER, 'true');
      return value;
    },
  );

  app.get(
    '/api/items',
    {
      schema: {
        tags,
        summary: 'List items',
        description: 'The item catalogue, filtered by type, with paging.',
        querystring: itemsQuery,
        response: { 200: itemListResponse, ...problems(400, 401) },
      },
    },
    async (req) => ({
      ...(await inventory.listItems(req.query)),
      limit: req.query.limit,
      offset: req.query.offset,
    }),
  );

  app.get(
    '/api/items/:id',
    {
      schema: {
        tags,
        summary: 'One item',
        description: 'One catalogue item: its name, type, description and metadata.',
        params: idParam,
        response: { 200: itemSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => inventory.getItem(req.params.id),
  );

  app.post(
    '/api/admin/data/items',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Create an item',
        description: 'Adds an item to the catalogue. Administrators only.',
        body: itemBody,
        response: { 201: itemSchema, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await inventory.createItem(req.body)),
  );

  app.put(
    '/api/admin/data/items/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Replace an item',
        description: 'Replaces a catalogue item. Administrators only.',
        params: idParam,
        body: itemBody,
        response: { 200: itemSchema, ...problems(400, 401, 403, 404) },
      },
    },
    async (req) => inventory.replaceItem(req.params.id, req.body),
  );

  app.delete(
    '/api/admin/data/items/:id',
    {
      config: admin,
      schema: {
        tags,
        summary: 'Delete an item (removed from every inventory; the ledger keeps its history)',
        description:
          'Removes an item from the catalogue and from every inventory; the ledger keeps its history. Administrators only.',
        params: idParam,
        response: { 204: noContent, ...problems(400, 401, 403, 404) },
      },
    },
    async (req, reply) => {
      await inventory.deleteItem(req.params.id);
      return reply.status(204).send(null);
    },
  );
}
