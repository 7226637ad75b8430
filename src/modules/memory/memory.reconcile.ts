// Reconciling a new exchange with what is stored, with a model (the memory.reconcile job, sent by
// memory.exchange.ts when MODEL_BASE_URL is set), as mem0 does: the model reads the new exchange
// and the retrievable memories most like it, extracts the facts the exchange states and decides
// for each: ADD (new: the exchange already holds it, nothing else to do), UPDATE (a stored memory
// says an older value of the same subject: it is superseded by the exchange, `keep` is what of it
// still holds), DELETE (the exchange says a stored memory is no longer true: superseded, reason
// "deleted") or NONE (already stored). An exchange whose every fact is NONE is itself a duplicate:
// it is superseded by the stored one. The model's answer is untrusted input: parsed with zod, ids
// not among the memories shown are ignored, and an answer that does not parse changes nothing.
import type { Logger } from 'pino';
import { z } from 'zod';
import { transaction, type Db } from '../../platform/db/database.js';
import { jsonObjectIn } from '../../platform/models/json-answer.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { ExchangeMemory } from './memory.exchange.js';
import type { Supersession } from './memory.hygiene.rules.js';
import * as repo from './memory.repository.js';

/** How many stored memories the model is shown. */
const SHOWN = 10;

export const reconcileAnswer = z.object({
  facts: z
    .array(
      z.object({
        fact: z.string().max(2000),
        event: z.enum(['ADD', 'UPDATE', 'DELETE', 'NONE']),
        id: z.number().int().positive().optional(),
        keep: z.string().max(8000).optional(),
      }),
    )
    .max(50),
});
export type ReconcileAnswer = z.infer<typeof reconcileAnswer>;

const SYSTEM = `You keep a player's memory tidy. You get a new exchange (what the player said and the
replies) and memories already stored, each with its id. List the facts the new exchange states
about the player or the world, and for each one decide:
- "ADD": no stored memory says it;
- "UPDATE": a stored memory says an older, different value of the same subject (the player's horse
  had another name, they lived elsewhere); give its "id", and in "keep" what of that memory is still
  true without the old fact (an empty string when nothing is);
- "DELETE": the new exchange says a stored memory is no longer true; give its "id";
- "NONE": a stored memory already says the same; give its "id".
Answer with JSON only: {"facts":[{"fact":"...","event":"ADD|UPDATE|DELETE|NONE","id":123,"keep":"..."}]}.
Facts of a question that nobody answered are no facts: answer {"facts":[]}.`;

/** The supersessions an answer asks for, over the memories shown (the pure part). */
export function applyAnswer(
  answer: ReconcileAnswer,
  newId: number,
  shown: { id: number }[],
): { superseded: Supersession[]; deleted: number[]; duplicateOf: number | null } {
  const ids = new Set(shown.map((m) => m.id));
  const known = answer.facts.filter((f) => f.event === 'ADD' || (f.id !== undefined && ids.has(f.id)));
  const superseded = new Map<number, Supersession>();
  const deleted: number[] = [];
  for (const f of known) {
    if (f.event === 'UPDATE' && !superseded.has(f.id!))
      superseded.set(f.id!, { id: f.id!, remainder: f.keep?.trim() ? f.keep.trim() : null });
    if (f.event === 'DELETE' && !deleted.includes(f.id!)) deleted.push(f.id!);
  }
  const allKnown = known.length > 0 && known.every((f) => f.event === 'NONE');
  return {
    superseded: [...superseded.values()].filter((s) => s.id !== newId),
    deleted: deleted.filter((id) => id !== newId && !superseded.has(id)),
    duplicateOf: allKnown ? known[0]!.id! : null,
  };
}

export class MemoryReconciler {
  constructor(
    private readonly db: Db,
    private readonly models: ModelGateway,
    private readonly log: Logger,
    private readonly exchanges: ExchangeMemory,
  ) {}

  /** The memory.reconcile job's work for one new memory. A model that fails throws (the job is
   * retried); an answer that does not parse is logged and changes nothing. */
  async reconcile(memoryId: number, signal?: AbortSignal): Promise<void> {
    const m = await repo.findById(this.db, memoryId);
    if (!m || m.metadata.supersededBy !== undefined) return;
    const npcUserId = typeof m.metadata.npcUserId === 'number' ? m.metadata.npcUserId : null;
    const shown = (
      await repo.liveSimilar(this.db, {
        userId: m.user_id,
        source: m.source,
        text: m.content,
        limit: SHOWN + 1,
        listener: { conversationId: m.conversation_id, npcUserId },
      })
    )
      .filter((s) => s.id !== m.id)
      .slice(0, SHOWN);
    if (shown.length === 0) return;
    const r = await this.models.chat({
      purpose: 'memory.reconcile',
      system: SYSTEM,
      messages: [
        {
          role: 'user',
          content: JSON.stringify({
            newExchange: m.content,
            stored: shown.map((s) => ({ id: s.id, text: s.content })),
          }),
        },
      ],
      temperature: 0,
      ...(signal ? { signal } : {}),
    });
    const parsed = reconcileAnswer.safeParse(jsonObjectIn(r.text));
    if (!parsed.success) {
      this.log.warn(
        { memoryId, issues: parsed.error.issues.slice(0, 3) },
        'memory.reconcile: the model answer does not parse',
      );
      return;
    }
    const plan = applyAnswer(parsed.data, m.id, shown);
    // Facts all new (the usual answer): nothing to write, and no transaction to open.
    if (plan.superseded.length + plan.deleted.length === 0 && plan.duplicateOf === null) return;
    await transaction(this.db, async (uow) => {
      const base = { userId: m.user_id, stored: shown };
      if (plan.superseded.length > 0)
        await this.exchanges.supersede(uow, {
          ...base,
          by: m.id,
          superseded: plan.superseded,
          reason: 'updated',
        });
      if (plan.deleted.length > 0)
        await this.exchanges.supersede(uow, {
          ...base,
          by: m.id,
          superseded: plan.deleted.map((id) => ({ id, remainder: null })),
          reason: 'deleted',
        });
      if (plan.duplicateOf !== null)
        await repo.supersede(uow.trx, { ids: [m.id], by: plan.duplicateOf, reason: 'duplicate' });
    });
  }
}
