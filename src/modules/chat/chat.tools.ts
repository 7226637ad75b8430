// The model's tools in a chat turn (spec: inventory rule 3, and a memory lookup). One registry:
// each tool is a zod schema (validation of the model's arguments and the JSON Schema it is shown)
// plus a handler. Handlers act with the director's authority over the conversation's player only:
// the player is fixed by the turn, never an argument the model could change.
import { z } from 'zod';
import { AppError } from '../../platform/http/problem.js';
import type { ToolCall, ToolSpec } from '../../platform/models/provider.js';
import type { InventoryService } from '../inventory/index.js';
import type { MemoryService } from '../memory/index.js';

export interface ToolContext {
  playerUserId: number;
  /** The character speaking (assistant or NPC): recorded as the actor of a change. */
  actorUserId: number;
  conversationId: number;
  /** The routed protocol's memory access: `limited` keeps the player's own memories out. */
  memoryAccess: 'full' | 'standard' | 'limited';
}

interface Tool<S extends z.ZodType> {
  name: string;
  description: string;
  schema: S;
  run: (args: z.output<S>, ctx: ToolContext) => Promise<unknown>;
}

function tool<S extends z.ZodType>(t: Tool<S>): Tool<z.ZodType> {
  return t;
}

export interface ToolDeps {
  inventory: InventoryService;
  memory: MemoryService;
}

export function chatTools(deps: ToolDeps) {
  return [
    tool({
      name: 'modifyInventory',
      description: 'Give the player items (positive quantity) or take items from them (negative quantity).',
      schema: z
        .object({
          itemId: z.number().int().positive(),
          quantity: z
            .number()
            .int()
            .refine((q) => q !== 0, 'must not be 0'),
        })
        .strict(),
      run: async (args: { itemId: number; quantity: number }, ctx) => {
        const { change, event } = await deps.inventory.directorModifyInventory({
          userId: ctx.playerUserId,
          actorUserId: ctx.actorUserId,
          itemId: args.itemId,
          quantity: args.quantity,
          reason: 'chat tool modifyInventory',
          metadata: { conversationId: ctx.conversationId },
        });
        return { ok: true, itemId: change.itemId, quantity: change.after, timelineEventId: event.id };
      },
    }),
    tool({
      name: 'modifyCurrency',
      description:
        'Award the player energy coins (positive amount) or charge them (negative amount). The balance never goes below 0.',
      schema: z
        .object({
          amount: z
            .number()
            .int()
            .refine((a) => a !== 0, 'must not be 0'),
        })
        .strict(),
      run: async (args: { amount: number }, ctx) => {
        const { change, event } = await deps.inventory.directorModifyCurrency({
          userId: ctx.playerUserId,
          actorUserId: ctx.actorUserId,
          amount: args.amount,
          reason: 'chat tool modifyCurrency',
          metadata: { conversationId: ctx.conversationId },
        });
        return { ok: true, energy_coins: change.after, timelineEventId: event.id };
      },
    }),
    tool({
      name: 'lookupMemory',
      description:
        "Search the player's memories, the world's and the speaking character's for something not already in context.",
      schema: z
        .object({
          query: z.string().trim().min(1).max(500),
          limit: z.number().int().min(1).max(10).optional(),
        })
        .strict(),
      run: async (args: { query: string; limit?: number | undefined }, ctx) => {
        const limit = args.limit ?? 5;
        const limited = ctx.memoryAccess === 'limited';
        // Full text only: the turn's one embedding request is already spent on the query. Limited
        // access searches the world and the speaker's core only (asked for more, then filtered).
        const found = (
          await deps.memory.retrieve(
            { userId: ctx.playerUserId, npcUserId: ctx.actorUserId },
            args.query,
            limited ? limit * 4 : limit,
            { conversationId: ctx.conversationId, embed: false },
          )
        )
          .filter((m) => !limited || m.tier === 'world' || m.userId === ctx.actorUserId)
          .slice(0, limit);
        return {
          ok: true,
          memories: found.map((m) => ({ content: m.content, source: m.source, similarity: m.similarity })),
        };
      },
    }),
  ];
}

export type ChatTool = ReturnType<typeof chatTools>[number];

export function toolSpecs(tools: ChatTool[]): ToolSpec[] {
  return tools.map((t) => ({
    name: t.name,
    description: t.description,
    parameters: z.toJSONSchema(t.schema),
  }));
}

/** Runs the model's tool calls, at most `cap` per turn; every call gets a result (an error result
 * for a refused one) so the second model call can explain what happened. */
export async function runToolCalls(tools: ChatTool[], calls: ToolCall[], ctx: ToolContext, cap: number) {
  const results: { call: ToolCall; result: unknown }[] = [];
  for (const [i, call] of calls.entries()) {
    const t = tools.find((x) => x.name === call.name);
    let result: unknown;
    if (i >= cap)
      result = { ok: false, error: 'tool_limit', detail: `at most ${cap} tool calls per message` };
    else if (!t) result = { ok: false, error: 'unknown_tool', detail: `no tool named ${call.name}` };
    else {
      const args = t.schema.safeParse(call.input);
      if (!args.success)
        result = {
          ok: false,
          error: 'validation_failed',
          detail: args.error.issues.map((x) => `${x.path.join('.')}: ${x.message}`).join('; '),
        };
      else {
        try {
          result = await t.run(args.data, ctx);
        } catch (err) {
          // Business refusals (insufficient funds, unknown item) go back to the model; anything else
          // fails the turn like any other error.
          if (!(err instanceof AppError) || err.status >= 500) throw err;
          result = { ok: false, error: err.code, detail: err.message, ...err.extensions };
        }
      }
    }
    results.push({ call, result });
  }
  return results;
}
