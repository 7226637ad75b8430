// The model's tools in a chat turn (spec: inventory rule 3, and a memory lookup). One registry:
// each tool is a zod schema (validation of the model's arguments and the JSON Schema it is shown)
// plus a handler. Handlers act with the director's authority over the conversation's player only:
// the player is fixed by the turn, never an argument the model could change, and the economy
// tools only within the speaking character's limits (chat.tools.rules.ts), whatever it asks.
import { z } from 'zod';
import { AppError } from '../../platform/http/problem.js';
import type { ToolCall, ToolSpec } from '../../platform/models/provider.js';
import type { CharactersService, NpcTools } from '../characters/index.js';
import {
  directorModifyCurrencyArgs,
  directorModifyInventoryArgs,
  type InventoryService,
} from '../inventory/index.js';
import { OBSERVER_ONLY_SOURCES, type MemoryService } from '../memory/index.js';
import {
  checkToolCall,
  currencyToolDescription,
  effectiveTools,
  inventoryToolDescription,
  LISTED_ITEMS,
  toolAllowed,
  type ToolRefusal,
  type ToolRequest,
} from './chat.tools.rules.js';

/** Asks the game whether a change may be made (TOOL_APPROVAL_URL): true only on its yes. */
export type ToolApprover = (change: {
  tool: string;
  playerUserId: number;
  characterUserId: number;
  conversationId: number;
  args: ToolRequest;
}) => Promise<boolean>;

export interface ToolContext {
  playerUserId: number;
  /** The character speaking (assistant or NPC): recorded as the actor of a change. */
  actorUserId: number;
  conversationId: number;
  /** The routed protocol's memory access: `limited` keeps the player's own memories out. */
  memoryAccess: 'full' | 'standard' | 'limited';
  /** The speaking character's tools and limits (TurnTools.forActor). */
  limits: NpcTools;
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
  characters: Pick<CharactersService, 'toolsOf'>;
  approve?: ToolApprover | undefined;
}

class LimitRefusal extends Error {
  constructor(readonly refusal: ToolRefusal) {
    super(refusal.detail);
  }
}

/** Runs an economy change only within the character's limits (checked again in the change's
 * transaction, the player's row locked) and, with an approver, only on the game's yes. A refusal
 * changes nothing: the model gets it as the tool's result and the player's timeline records it. */
async function limited(
  deps: ToolDeps,
  ctx: ToolContext,
  req: ToolRequest,
  apply: (guard: (usedToday: number) => void) => Promise<unknown>,
): Promise<unknown> {
  const refuse = async (r: ToolRefusal) => {
    await deps.inventory.directorRefused({
      userId: ctx.playerUserId,
      actorUserId: ctx.actorUserId,
      tool: req.tool,
      refusal: r.reason,
      detail: r.detail,
      args: req,
      metadata: { conversationId: ctx.conversationId },
    });
    return { ok: false, error: 'tool_refused', reason: r.reason, detail: r.detail, limit: r.limit };
  };
  const first = checkToolCall(ctx.limits, req);
  if (first) return refuse(first);
  if (deps.approve) {
    // Ask the game only for a change the limits would let through now.
    const kind = req.tool === 'modifyCurrency' ? 'currency' : 'item';
    const used = await deps.inventory.directorUsedToday(ctx.playerUserId, ctx.actorUserId, kind);
    const daily = checkToolCall(ctx.limits, req, used);
    if (daily) return refuse(daily);
    const { playerUserId, actorUserId: characterUserId, conversationId } = ctx;
    if (!(await deps.approve({ tool: req.tool, playerUserId, characterUserId, conversationId, args: req })))
      return refuse({ reason: 'not_approved', detail: 'the game did not approve this change' });
  }
  try {
    return await apply((usedToday) => {
      const r = checkToolCall(ctx.limits, req, usedToday);
      if (r) throw new LimitRefusal(r);
    });
  } catch (err) {
    if (err instanceof LimitRefusal) return refuse(err.refusal);
    throw err;
  }
}

export function chatTools(deps: ToolDeps) {
  return [
    tool({
      name: 'modifyInventory',
      description: 'Give the player items (positive quantity) or take items from them (negative quantity).',
      schema: directorModifyInventoryArgs.strict(),
      run: (args: { itemId: number; quantity: number }, ctx) =>
        limited(deps, ctx, { tool: 'modifyInventory', ...args }, async (guard) => {
          const { change, event } = await deps.inventory.directorModifyInventory({
            userId: ctx.playerUserId,
            actorUserId: ctx.actorUserId,
            itemId: args.itemId,
            quantity: args.quantity,
            reason: 'chat tool modifyInventory',
            metadata: { conversationId: ctx.conversationId },
            guard,
          });
          return { ok: true, itemId: change.itemId, quantity: change.after, timelineEventId: event.id };
        }),
    }),
    tool({
      name: 'modifyCurrency',
      description:
        'Award the player energy coins (positive amount) or charge them (negative amount). The balance never goes below 0.',
      schema: directorModifyCurrencyArgs.strict(),
      run: (args: { amount: number }, ctx) =>
        limited(deps, ctx, { tool: 'modifyCurrency', ...args }, async (guard) => {
          const { change, event } = await deps.inventory.directorModifyCurrency({
            userId: ctx.playerUserId,
            actorUserId: ctx.actorUserId,
            amount: args.amount,
            reason: 'chat tool modifyCurrency',
            metadata: { conversationId: ctx.conversationId },
            guard,
          });
          return { ok: true, energy_coins: change.after, timelineEventId: event.id };
        }),
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
          // Observers' reflections quote every user: never a player's to look up.
          .filter((m) => !OBSERVER_ONLY_SOURCES.includes(m.source))
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

/** A speaking character's tools: its limits, and the specs it is shown (only the tools its card
 * allows, described with its limits and the items it may give, by id). */
export class TurnTools {
  private readonly itemNames = new Map<
    string,
    { at: number; value: Promise<{ items: { id: number; name: string }[]; more: number }> }
  >();

  constructor(
    private readonly deps: ToolDeps,
    private readonly specs: ToolSpec[],
    /** How long the item names of a description are reused (the catalogue changes rarely). */
    private readonly itemsTtlMs = 5_000,
  ) {}

  async forActor(
    actorUserId: number,
    /** The actor's card when the turn already read it (its speaker), else read here. */
    card?: { tools: NpcTools | null; isAssistant: boolean },
  ): Promise<{ limits: NpcTools; specs: ToolSpec[] }> {
    const limits = effectiveTools(card ?? (await this.deps.characters.toolsOf(actorUserId)));
    const inv = limits.modifyInventory;
    const items = inv ? await this.items(inv.items) : undefined;
    const specs = this.specs
      .filter((s) => toolAllowed(limits, s.name))
      .map((s) => {
        if (s.name === 'modifyInventory' && inv && items)
          return { ...s, description: inventoryToolDescription(inv, items.items, items.more) };
        if (s.name === 'modifyCurrency' && limits.modifyCurrency)
          return { ...s, description: currencyToolDescription(limits.modifyCurrency) };
        return s;
      });
    return { limits, specs };
  }

  private items(which: 'all' | number[]) {
    const key = which === 'all' ? 'all' : which.slice(0, LISTED_ITEMS).join(',');
    const hit = this.itemNames.get(key);
    if (hit && performance.now() - hit.at < this.itemsTtlMs) return hit.value;
    const value =
      which === 'all'
        ? this.deps.inventory
            .listItems({ limit: LISTED_ITEMS, offset: 0 })
            .then(({ items, total }) => ({ items, more: total - items.length }))
        : this.deps.inventory
            .itemsNamed(which.slice(0, LISTED_ITEMS))
            .then((items) => ({ items, more: Math.max(0, which.length - LISTED_ITEMS) }));
    if (this.itemNames.size > 100) this.itemNames.clear();
    this.itemNames.set(key, { at: performance.now(), value });
    value.catch(() => this.itemNames.delete(key));
    return value;
  }
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
