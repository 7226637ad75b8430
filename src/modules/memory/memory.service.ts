// Memory: the three tiers (spec "Memory"; contract: "Memory"), the module's facade. Writes and
// the owner's CRUD are here; the embedding pipeline is memory.embedding.ts (its job
// memory.jobs.ts), retrieval memory.retrieval.ts, context gathering memory.context.ts. A memory and
// its chunks are written in one transaction together with the embedding job; the job embeds
// outside any transaction and may fail and retry without losing anything: retrieval falls back to
// full text meanwhile. With the offline embedder (computed here: no network, nothing that fails or
// waits) there is no job: the embeddings are made while the database writes the chunks and stored
// in the same transaction, so a memory is searchable by vector as soon as it is written.
import type { Logger } from 'pino';
import { transaction, type Db, type Executor, type Trx } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { forbidden, notFound, validationFailed, zodErrors } from '../../platform/http/problem.js';
import { enqueueLater } from '../../platform/jobs/later.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import { gatherContext, type GatherArgs } from './memory.context.js';
import { MemoryEmbedding } from './memory.embedding.js';
import * as embeddings from './memory.embeddings.repository.js';
import { ExchangeMemory, type ExchangeInput } from './memory.exchange.js';
import { defineMemoryJobs, EMBED_JOB } from './memory.jobs.js';
import {
  dtos,
  newMemory,
  toDto,
  type AddMemoryInput,
  type Caller,
  type ConversationContext,
  type MemoryAccounts,
  type MemoryServiceOptions,
  type RetrievedMemory,
} from './memory.mapping.js';
import * as repo from './memory.repository.js';
import { MemoryReconciler } from './memory.reconcile.js';
import { MemoryRetrieval } from './memory.retrieval.js';
import { chunkText, contentProblem, decideOwner, tierOf, type MemorySource } from './memory.rules.js';
import { memoryMetadataSchema, type MemoryDto } from './memory.schemas.js';
import { traced } from '../../platform/tracing.js';

/** How long a chat exchange waits for a turn's query (memory.embedding.ts `hold`) to carry it. */
const DEFERRED_EMBED_SECONDS = 120;

/** The current backstop window (pg-boss singletonSeconds slots are aligned to the epoch). */
const deferredSlotNow = () => Math.floor(Date.now() / (DEFERRED_EMBED_SECONDS * 1000));
/** The backstop job of a window: one per window, starting a window after it was sent. */
const BACKSTOP = {
  startAfterSeconds: DEFERRED_EMBED_SECONDS,
  singletonKey: 'memory.deferred',
  singletonSeconds: DEFERRED_EMBED_SECONDS,
};

export class MemoryService {
  private readonly embedding: MemoryEmbedding;
  private readonly retrieval: MemoryRetrieval;
  private readonly exchanges: ExchangeMemory;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    private readonly models: ModelGateway,
    log: Logger,
    private readonly opts: MemoryServiceOptions,
    private readonly accounts: MemoryAccounts,
  ) {
    this.embedding = new MemoryEmbedding(db, jobs, models, log, opts);
    this.retrieval = new MemoryRetrieval(db, models, this.embedding, opts);
    this.exchanges = new ExchangeMemory(db, jobs, log, opts.reconcile, (inputs, uow, o) =>
      this.addMemories(inputs, uow, o),
    );
    defineMemoryJobs(jobs, this.embedding, new MemoryReconciler(db, models, log, this.exchanges));
  }

  /** Without pgvector: the sketch index (tests and the benchmark look inside). */
  get sketches() {
    return this.retrieval.sketches;
  }

  /** After the job queue started: re-embed in the background when the embedding model or size
   * changed since the stored embeddings were made (contract: "Memory"). */
  start(): Promise<void> {
    return this.embedding.start();
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  private checkContent(content: string, path = 'body.content'): void {
    const problem = contentProblem(content, this.opts.maxContentBytes);
    if (problem) throw validationFailed([{ path, message: problem }]);
  }

  /** The spec's addMemory, for callers that already decided the owner (training, reflections,
   * chat). Runs in the given unit of work (its embedding job then exists exactly when the memory
   * does), or in its own. */
  async addMemory(input: AddMemoryInput, uow?: UnitOfWork): Promise<MemoryDto> {
    const [m] = await this.addMemories([input], uow);
    return m!;
  }

  /** Several memories in one transaction and one embedding job (ingestion, benchmarks), by one
   * path whose options only say what goes with the rows: with a local embedder their embeddings
   * (made here, no network, nothing that fails or waits), else an embedding job. `deferEmbedding`
   * (the chat turn's exchange): no job of its own, as its chunks are embedded together with the
   * next turn's query (spec: at most one embedding request per message); one delayed job per
   * window (DEFERRED_EMBED_SECONDS) is the backstop when no next turn comes. `dedupe`: only the
   * inputs that are no near-duplicate of a retrievable memory of their owner and source are
   * written (and answered), each once (memory.hygiene.rules.ts). */
  async addMemories(
    given: AddMemoryInput[],
    outer?: UnitOfWork,
    opts: { deferEmbedding?: boolean; dedupe?: boolean } = {},
  ): Promise<MemoryDto[]> {
    given.forEach((i, n) =>
      this.checkContent(i.content, given.length > 1 ? `memories.${n}.content` : 'body.content'),
    );
    // `dedupe`: only the inputs that are no near-duplicate of a retrievable memory of their owner
    // and source are written (and answered), each once (memory.hygiene.rules.ts).
    const inputs = opts.dedupe ? await this.exchanges.fresh(given, outer?.trx) : given;
    if (inputs.length === 0) return [];
    const list = inputs.map(newMemory);
    const chunks = list.flatMap((m, memory) =>
      chunkText(m.content, this.opts.chunkSize, this.opts.chunkOverlap).map((content, index) => ({
        memory,
        index,
        content,
      })),
    );
    const local = this.models.embedsLocally;
    const job = local ? undefined : this.embedJobFor(opts.deferEmbedding === true);
    // A chat exchange's chunks are held by this process for its next query request, when they fit.
    const claim = opts.deferEmbedding ? this.embedding.claimToHold(chunks.length) : undefined;
    const write = async (uow: UnitOfWork | undefined) => {
      const t = uow?.trx ?? this.db;
      const queue = local ? false : (claim ?? true);
      const written = repo.insertMemoriesWithChunks(t, list, chunks, { queue });
      // A local embedder's vectors are made while the database writes the rows (awaited together).
      const [{ ids, chunkIds, at }, embedded] = await Promise.all([
        written,
        local
          ? this.embedding.embedHere(
              t,
              chunks.map((c) => c.content),
            )
          : undefined,
      ]);
      if (embedded)
        await embeddings.insertEmbeddings(
          t,
          this.opts.vector,
          embedded.model,
          {
            ids: chunkIds,
            userIds: chunks.map((c) => list[c.memory]!.userId),
            tiers: chunks.map((c) => list[c.memory]!.tier),
            sources: chunks.map((c) => list[c.memory]!.source),
            memoryIds: chunks.map((c) => ids[c.memory]!),
            chunkIndexes: chunks.map((c) => c.index),
            conversationIds: chunks.map((c) => list[c.memory]!.conversationId),
          },
          embedded.encoded,
        );
      const hold = () => this.embedding.hold(chunks, chunkIds, ids);
      if (claim && uow) uow.afterCommit(hold);
      else if (claim) hold();
      // spec: Memory rule 2, embedding happens asynchronously, in a job sent with this transaction
      // (a job always comes with a unit: without one, the rows are all that is written).
      if (job && uow) {
        void enqueueLater(uow, EMBED_JOB, job.data(ids), job.options);
        const { slot } = job;
        if (slot !== undefined) uow.afterCommit(() => (this.deferredSlot = slot));
      }
      return dtos(list, ids, at);
    };
    if (outer) return write(outer);
    // Rows alone (a chat exchange whose window already has its backstop job) are one statement,
    // which needs no transaction.
    if (!local && !job) return write(undefined);
    return transaction(this.db, write);
  }

  /** The embedding job sent with remotely embedded memories: their own, or for a chat exchange
   * the window's backstop, once per window and node (undefined when this node sent it). pg-boss
   * keeps one job per window (singletonSeconds slots of the epoch), starting a window after it was
   * sent, so after the slot's last exchange; it embeds all that still waits when it runs. Once
   * this process has committed one for the current slot, sending more would only cost the turn a
   * statement (each node still sends its own first one: this remembers, it does not coordinate);
   * `slot` is remembered once the write that sends it committed outside a caller's transaction. */
  private embedJobFor(deferred: boolean) {
    if (!deferred)
      return { data: (memoryIds: number[]) => ({ memoryIds }), options: undefined, slot: undefined };
    const slot = deferredSlotNow();
    if (slot === this.deferredSlot) return undefined;
    return { data: () => ({ memoryIds: [] }), options: BACKSTOP, slot };
  }

  /** The chat turn's exchange, as the player's shared memory of its conversation and speaker
   * (metadata `conversationId`, `playerName`, `npcName`, `npcUserId` and the turn's own): stored
   * when it carries something and is no near-duplicate, then reconciled with what is stored
   * (memory.exchange.ts). Never throws (logs). */
  rememberExchange(x: ExchangeInput): Promise<void> {
    return this.exchanges.remember(x);
  }

  /** The window (DEFERRED_EMBED_SECONDS slot) whose backstop job this process has committed. */
  private deferredSlot = -1;

  /** The chunks of an edited memory: embedded here with a local embedder, else by the job. */
  private async addChunks(uow: UnitOfWork, m: repo.MemoryRow, texts: string[]): Promise<void> {
    if (!this.models.embedsLocally) {
      await repo.insertChunks(uow.trx, m, texts, { queue: true });
      void enqueueLater(uow, EMBED_JOB, { memoryIds: [m.id] });
      return;
    }
    const [ids, embedded] = await Promise.all([
      repo.insertChunks(uow.trx, m, texts, { queue: false }),
      this.embedding.embedHere(uow.trx, texts),
    ]);
    await embeddings.insertEmbeddings(
      uow.trx,
      this.opts.vector,
      embedded.model,
      {
        ids,
        userIds: ids.map(() => m.user_id),
        tiers: ids.map(() => m.tier),
        sources: ids.map(() => m.source),
        memoryIds: ids.map(() => m.id),
        chunkIndexes: ids.map((_, i) => i),
        conversationIds: ids.map(() => m.conversation_id),
      },
      embedded.encoded,
    );
  }

  /** POST /api/assistant/memory: authorise by the ownership rules, then addMemory. */
  async create(
    caller: Caller,
    body: {
      content: string;
      source: MemorySource;
      metadata?: Record<string, unknown> | undefined;
      userId?: number | undefined;
    },
  ): Promise<MemoryDto> {
    this.checkContent(body.content);
    // The route's schema, again here: every caller of create (the MCP tool too) meets its limits.
    if (body.metadata !== undefined) {
      const metadata = memoryMetadataSchema.safeParse(body.metadata);
      if (!metadata.success) throw validationFailed(zodErrors(metadata.error, 'body.metadata'));
    }
    const tier = tierOf(body.source);
    const decision = decideOwner({
      source: body.source,
      requestedUserId: body.userId,
      caller,
      assistantUserId:
        caller.admin && (tier === 'world' || (tier === 'assistant_core' && body.userId === undefined))
          ? await this.accounts.assistantUserId()
          : 0,
    });
    if (!decision.ok) throw forbidden(decision.detail);
    const owner = await this.accounts.identity(decision.ownerId);
    if (!owner) throw validationFailed([{ path: 'body.userId', message: 'no such user' }]);
    if (decision.mustBeCharacter && owner.role !== 'silicon')
      throw validationFailed([
        {
          path: 'body.userId',
          message: `core-tier memories (${body.source}) belong to a character (a silicon account)`,
        },
      ]);
    return this.addMemory({
      userId: decision.ownerId,
      content: body.content,
      source: body.source,
      metadata: body.metadata,
      createdBy: caller.id,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Own memories (GET/PATCH/DELETE /api/memories/<id>): another user's memory answers 404.

  private async own(callerId: number, id: number, executor: Executor = this.db): Promise<repo.MemoryRow> {
    const m = await repo.findById(executor, id);
    if (!m || m.user_id !== callerId) throw notFound('memory');
    return m;
  }

  async getOwn(callerId: number, id: number): Promise<MemoryDto> {
    return toDto(await this.own(callerId, id));
  }

  async listOwn(callerId: number, q: { source?: MemorySource | undefined; limit: number; offset: number }) {
    const { rows, total } = await repo.list(this.db, { ...q, userId: callerId });
    return { memories: rows.map(toDto), total, limit: q.limit, offset: q.offset };
  }

  async adminList(q: {
    userId?: number | undefined;
    source?: MemorySource | undefined;
    limit: number;
    offset: number;
  }) {
    const { rows, total } = await repo.list(this.db, q);
    return { memories: rows.map(toDto), total, limit: q.limit, offset: q.offset };
  }

  /** Edits content and/or metadata; new content is re-chunked and re-embedded in the background. */
  async patchOwn(
    callerId: number,
    id: number,
    changes: { content?: string | undefined; metadata?: Record<string, unknown> | undefined },
  ): Promise<MemoryDto> {
    if (changes.content !== undefined) this.checkContent(changes.content);
    return transaction(this.db, async (uow) => {
      const m = await this.own(callerId, id, uow.trx);
      const metadata = changes.metadata ?? m.metadata;
      const conversationId = typeof metadata.conversationId === 'number' ? metadata.conversationId : null;
      const updated = (await repo.updateMemory(uow.trx, id, {
        ...(changes.content !== undefined ? { content: changes.content } : {}),
        ...(changes.metadata !== undefined
          ? { metadata: JSON.stringify(changes.metadata), conversation_id: conversationId }
          : {}),
      }))!;
      // A superseded memory has no chunks (it left retrieval); one whose mark is taken off has
      // them again.
      const live = updated.metadata.supersededBy === undefined;
      if (
        changes.content !== undefined ||
        conversationId !== m.conversation_id ||
        live !== (m.metadata.supersededBy === undefined)
      ) {
        // Fresh chunks have no embedding; a job embedding the old ones writes to rows that are gone.
        await repo.deleteChunks(uow.trx, id);
        if (live)
          await this.addChunks(
            uow,
            updated,
            chunkText(updated.content, this.opts.chunkSize, this.opts.chunkOverlap),
          );
      }
      return toDto(updated);
    });
  }

  async deleteOwn(callerId: number, id: number): Promise<void> {
    if (!(await repo.deleteMemory(this.db, id, callerId))) throw notFound('memory');
  }

  /** An admin's edit or forgetting of anyone's memory (a character's, trained): as its owner's. */
  async patchAny(id: number, changes: Parameters<MemoryService['patchOwn']>[2]): Promise<MemoryDto> {
    return this.patchOwn(await this.ownerOf(id), id, changes);
  }

  async deleteAny(id: number): Promise<void> {
    await this.deleteOwn(await this.ownerOf(id), id);
  }

  private async ownerOf(id: number): Promise<number> {
    const m = await repo.findById(this.db, id);
    if (!m) throw notFound('memory');
    return m.user_id;
  }

  /** Every memory the caller owns, oldest first, one JSON object per line. */
  async *exportOwn(callerId: number): AsyncGenerator<string> {
    let after = 0;
    for (;;) {
      const rows = await repo.pageByOwner(this.db, callerId, after, 500);
      for (const r of rows) yield JSON.stringify(toDto(r)) + '\n';
      if (rows.length < 500) return;
      after = rows.at(-1)!.id;
    }
  }

  /** The memories with these ids, in the order asked (ids not found are left out): for a caller
   * that recorded which memories it wrote (training's by-heart texts). */
  async byIds(ids: number[]): Promise<MemoryDto[]> {
    const rows = new Map((await repo.findByIds(this.db, ids)).map((r) => [r.id, r]));
    return ids.flatMap((id) => {
      const r = rows.get(id);
      return r ? [toDto(r)] : [];
    });
  }

  /** Removes a user's memories of one source whose `metadata[key]` is `value` (a memory that is
   * replaced, such as an instance's core-belief encoding), in the caller's transaction. */
  removeByMetadata(
    p: { userId: number; source: MemorySource; key: string; value: string | number },
    trx?: Trx,
  ): Promise<number> {
    return repo.deleteByMetadata(trx ?? this.db, { ...p, value: String(p.value) });
  }

  /** Newest memories of a user (the sync module's universal-state reader). */
  async newestForUser(userId: number, limit: number) {
    const { rows } = await repo.list(this.db, { userId, limit, offset: 0 });
    return rows.map((m) => ({
      id: m.id,
      userId: m.user_id,
      content: m.content,
      source: m.source,
      createdAt: m.created_at.toISOString(),
    }));
  }

  /** Memories about an observer (`metadata.observerId`: its reflections), as they stood at `upTo`
   * (ISO 8601): created by then, newest first; of one source, of some owners, when given. */
  async aboutObserver(p: repo.ObserverMemoriesQuery): Promise<MemoryDto[]> {
    return (await repo.aboutObserver(this.db, p)).map(toDto);
  }

  /** The owners of the memories about an observer as they stood at `upTo`, each once. */
  ownersAboutObserver(p: { observerId: number; upTo: string }): Promise<number[]> {
    return repo.ownersAboutObserver(this.db, p);
  }

  /** For the admin statistics: memories by tier. */
  async countByTier(): Promise<{ tier: string; count: number }[]> {
    const rows = await repo.countByTier(this.db);
    return rows.map((m) => ({ tier: m.tier, count: Number(m.n) }));
  }

  // ---------------------------------------------------------------------------------------------
  // The other parts' doors

  /** The memory.embed job's work (also run by tests and the benchmark). */
  embedPending: MemoryEmbedding['embedPending'] = (...args) => this.embedding.embedPending(...args);
  embedQuery: MemoryEmbedding['embedQuery'] = (text, opts) => this.embedding.embedQuery(text, opts);
  embedQueryBatched: MemoryEmbedding['embedQueryBatched'] = (...a) => this.embedding.embedQueryBatched(...a);
  embeddingStatus = () => this.embedding.embeddingStatus();
  reembedHere: MemoryEmbedding['reembedHere'] = (onBatch) => this.embedding.reembedHere(onBatch);
  retrieve: MemoryRetrieval['retrieve'] = (...args) =>
    traced('memory.retrieve', {}, () => this.retrieval.retrieve(...args));
  search: MemoryRetrieval['search'] = (...args) => this.retrieval.search(...args);
  sweep: MemoryRetrieval['sweep'] = () => this.retrieval.sweep();
  sketchIndexStats: MemoryRetrieval['sketchIndexStats'] = () => this.retrieval.sketchIndexStats();

  /** spec: "Conversation context" (memory.context.ts). */
  gatherContext(...args: GatherArgs): Promise<ConversationContext> {
    const parts = {
      embedQuery: this.embedQuery,
      retrieve: this.retrieve,
      identity: (id: number) => this.accounts.identity(id),
    };
    return traced('memory.context', {}, () => gatherContext(parts, ...args));
  }
}

export { EMBED_JOB };
export type { AddMemoryInput, RetrievedMemory, MemorySource };
