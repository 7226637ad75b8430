// A chat exchange as memory (issue 55, "Memory hygiene"): what the turn said is stored when it
// carries something (memory.hygiene.rules.ts), once (a near-duplicate of a retrievable memory of
// the same listener is not stored again), and reconciled with what is stored: offline by the
// rule-based "my X is Y" reconciler here, with a model in the background (memory.reconcile.ts, the
// memory.reconcile job). A superseded memory is marked in its metadata and leaves retrieval (its
// chunks go); its row stays, so /api/memories lists both.
import type { Logger } from 'pino';
import { transaction, type Db, type Trx } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import {
  carriesNothing,
  exchangeContent,
  nearDuplicateOf,
  offlineSupersessions,
  type Supersession,
} from './memory.hygiene.rules.js';
import { RECONCILE_JOB } from './memory.jobs.js';
import type { AddMemoryInput } from './memory.mapping.js';
import * as repo from './memory.repository.js';
import type { MemoryDto } from './memory.schemas.js';

/** How many stored memories a new one is compared with. */
const CANDIDATES = 20;

export interface ExchangeInput {
  /** The player. */
  userId: number;
  conversationId: number;
  playerName: string;
  /** Who answered (the assistant or a character); for a group, the lead. */
  speaker: { id: number; name: string };
  userText: string;
  replies: { speakerName: string; text: string }[];
  /** Extra metadata the turn adds (personaSessionId, persona…). */
  metadata: Record<string, unknown>;
}

type Write = (
  inputs: AddMemoryInput[],
  uow?: UnitOfWork,
  opts?: { deferEmbedding?: boolean },
) => Promise<MemoryDto[]>;

export class ExchangeMemory {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    private readonly log: Logger,
    /** MEMORY_RECONCILE: by the model (a job), by the offline rules, or not at all. */
    private readonly reconcile: 'model' | 'rules' | 'off',
    private readonly write: Write,
  ) {}

  /** Stores the exchange as the player's shared memory when it carries something and is not
   * already stored, then reconciles it with what is. Never throws (logs). */
  async remember(x: ExchangeInput): Promise<void> {
    try {
      const content = exchangeContent(x);
      if (content === null) return;
      const stored = await repo.liveSimilar(this.db, {
        userId: x.userId,
        source: 'shared',
        text: content,
        limit: CANDIDATES,
        listener: { conversationId: x.conversationId, npcUserId: x.speaker.id },
      });
      const repeats = nearDuplicateOf(content);
      if (stored.some((m) => repeats(m.content))) return;
      const [memory] = await this.write(
        [
          {
            userId: x.userId,
            source: 'shared',
            content,
            conversationId: x.conversationId,
            metadata: {
              conversationId: x.conversationId,
              playerName: x.playerName,
              npcName: x.speaker.name,
              npcUserId: x.speaker.id,
              ...x.metadata,
            },
          },
        ],
        undefined,
        { deferEmbedding: true },
      );
      if (stored.length === 0 || this.reconcile === 'off') return;
      if (this.reconcile === 'model') {
        // The turn's facts are reconciled in the background (memory.reconcile.ts).
        await this.jobs.enqueue(this.db, RECONCILE_JOB, { memoryId: memory!.id });
        return;
      }
      const superseded = offlineSupersessions(content, x.playerName, stored);
      if (superseded.length > 0)
        await transaction(this.db, (uow) =>
          this.supersede(uow, { userId: x.userId, by: memory!.id, superseded, stored, reason: 'superseded' }),
        );
    } catch (err) {
      this.log.warn(
        { err, conversationId: x.conversationId },
        'could not store the chat exchange as a memory',
      );
    }
  }

  /** Marks the memories superseded by `by` and writes what still holds of each as a memory of
   * its own (its metadata, and `remainderOf`). */
  async supersede(
    uow: UnitOfWork,
    p: {
      userId: number;
      by: number | null;
      superseded: Supersession[];
      stored: repo.LiveMemory[];
      reason: string;
    },
  ): Promise<void> {
    const { by, superseded, stored, reason } = p;
    const marked = new Set(await repo.supersede(uow.trx, { ids: superseded.map((s) => s.id), by, reason }));
    const rows = new Map(stored.map((m) => [m.id, m]));
    const remainders = superseded.flatMap((s) => {
      const old = rows.get(s.id);
      if (!marked.has(s.id) || !old || s.remainder === null || carriesNothing(s.remainder)) return [];
      const { supersededBy: _a, supersededAt: _b, supersededReason: _c, ...metadata } = old.metadata;
      return [
        {
          userId: p.userId,
          source: 'shared' as const,
          content: s.remainder,
          conversationId: old.conversation_id ?? undefined,
          metadata: { ...metadata, remainderOf: old.id },
        },
      ];
    });
    if (remainders.length > 0) await this.write(remainders, uow);
  }

  /** The inputs that are not near-duplicates of a retrievable memory of the same owner and source
   * (nor of an earlier input): training's beliefs, each stored once however often a file is
   * trained. */
  async fresh(inputs: AddMemoryInput[], trx?: Trx): Promise<AddMemoryInput[]> {
    const out: AddMemoryInput[] = [];
    for (const input of inputs) {
      const repeats = nearDuplicateOf(input.content);
      if (out.some((o) => o.userId === input.userId && o.source === input.source && repeats(o.content)))
        continue;
      const stored = await repo.liveSimilar(trx ?? this.db, {
        userId: input.userId,
        source: input.source,
        text: input.content,
        limit: CANDIDATES,
      });
      if (!stored.some((m) => repeats(m.content))) out.push(input);
    }
    return out;
  }
}
