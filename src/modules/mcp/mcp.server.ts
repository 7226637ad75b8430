// The MCP server of one caller: the tools a coding assistant or desktop agent uses to read and
// write the caller's memory, and to read their timeline and inventory. Each tool calls the same
// service method as the REST route that does the same thing, as the caller, so the access rules
// are the route's: another user's memory is not found, a non-administrator writes only shared
// memories of their own.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { AppError, toProblem } from '../../platform/http/problem.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import { MEMORY_SOURCES, toSearchResult, type MemoryService } from '../memory/index.js';
import type { InventoryService } from '../inventory/index.js';
import type { TimelineService } from '../timeline/index.js';

export interface McpServices {
  memory: Pick<MemoryService, 'search' | 'create' | 'listOwn' | 'deleteOwn'>;
  timeline: Pick<TimelineService, 'list'>;
  inventory: Pick<InventoryService, 'inventory'>;
  version: string;
}

/** A tool's answer: its value as JSON text (what every MCP client reads). */
const answer = (value: unknown): CallToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
});

/** A refusal as the REST route would give it: the problem object, flagged as a tool error. */
function refusal(err: unknown): CallToolResult {
  const problem = err instanceof AppError ? err.toProblem() : toProblem(err);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }] };
}

const run =
  <A>(fn: (args: A) => Promise<unknown>) =>
  async (args: A): Promise<CallToolResult> => {
    try {
      return answer(await fn(args));
    } catch (err) {
      return refusal(err);
    }
  };

const memoryId = z.number().int().positive().describe('a memory id (from memory_search or memory_list)');

export function mcpServerFor(user: UserPrincipal, s: McpServices): McpServer {
  const server = new McpServer(
    { name: 'assistant-platform', version: s.version },
    {
      instructions:
        "The assistant platform's long-term memory of the signed-in user, their timeline and their inventory. " +
        'Search memory before answering questions about the user; add what they ask you to remember.',
    },
  );
  const caller = { id: user.id, admin: user.admin };

  server.registerTool(
    'memory_search',
    {
      title: 'Search memory',
      description:
        "Hybrid search (meaning and words) over the user's memories and the assistant's world knowledge, best first, each with a similarity in [0, 1].",
      inputSchema: {
        query: z.string().min(1).max(2000).describe('what to look for, in words'),
        limit: z.number().int().min(1).max(50).default(10),
      },
      annotations: { readOnlyHint: true },
    },
    run(async ({ query, limit }) => ({
      memories: (await s.memory.search(caller, { query, limit })).map(toSearchResult),
    })),
  );

  server.registerTool(
    'memory_add',
    {
      title: 'Remember',
      description: "Stores a memory of the user's (a shared memory: the assistant recalls it in every chat).",
      inputSchema: {
        content: z.string().min(1).describe('what to remember, in plain words'),
        metadata: z.record(z.string(), z.unknown()).optional().describe('context kept with it'),
      },
    },
    run(({ content, metadata }) => s.memory.create(caller, { content, source: 'shared', metadata })),
  );

  server.registerTool(
    'memory_list',
    {
      title: 'List memories',
      description: "The user's own memories, newest first, with paging.",
      inputSchema: {
        source: z.enum(MEMORY_SOURCES).optional(),
        limit: z.number().int().min(1).max(100).default(20),
        offset: z.number().int().min(0).default(0),
      },
      annotations: { readOnlyHint: true },
    },
    run((q) => s.memory.listOwn(user.id, q)),
  );

  server.registerTool(
    'memory_forget',
    {
      title: 'Forget a memory',
      description: "Deletes one of the user's own memories for good.",
      inputSchema: { id: memoryId },
      annotations: { destructiveHint: true },
    },
    run(async ({ id }) => {
      await s.memory.deleteOwn(user.id, id);
      return { forgotten: id };
    }),
  );

  server.registerTool(
    'timeline',
    {
      title: 'Timeline',
      description:
        "The user's newest timeline events (what happened to them across games, chats and workflows).",
      inputSchema: { limit: z.number().int().min(1).max(100).default(20) },
      annotations: { readOnlyHint: true },
    },
    run(async ({ limit }) => ({ events: await s.timeline.list({ userId: user.id, limit }) })),
  );

  server.registerTool(
    'inventory',
    {
      title: 'Inventory',
      description: "The user's items with their quantities, and their energy coin balance.",
      annotations: { readOnlyHint: true },
    },
    run(() => s.inventory.inventory(user.id)),
  );

  return server;
}
