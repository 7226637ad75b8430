// Memory: the three tiers (spec "Memory"; contract: "Memory"), chunked hybrid retrieval and
// context gathering (spec "Conversation context"). A memory and its chunks are written in one
// transaction together with the embedding job; the job embeds outside any transaction and may
// fail and retry without losing anything: retrieval falls back to full text meanwhile.
// With the offline embedder (computed here: no network, nothing that fails or waits) there is no
// job: the embeddings are made while the database writes the chunks and stored in the same
// transaction, so a memory is searchable by vector as soon as it is written.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import { z } from 'zod';
import { transaction, type Db, type Executor, type Trx } from '../../platform/db/database.js';
import { forbidden, notFound, validationFailed } from '../../platform/http/problem.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import * as embeddings from './memory.embeddings.repository.js';
import * as encoding from './memory.encoding.js';
import * as repo from './memory.repository.js';
import * as search from './memory.search.repository.js';
import {
  chunkText,
  contentProblem,
  decideOwner,
  fuseHits,
  tierOf,
  type ChunkHit,
  type MemorySource,
  type MemoryTier,
} from './memory.rules.js';
import type { MemoryDto } from './memory.schemas.js';
import { SketchIndex, TOMBSTONE_HOURS } from './memory.sketch-index.js';

export const EMBED_JOB = 'memory.embed';
/** Batches one job run embeds before handing the rest to a fresh job (keeps runs short). */
const ROUNDS_PER_RUN = 50;
/** How long a chat exchange waits for the next turn's query to carry its embedding. */
const DEFERRED_EMBED_SECONDS = 120;

/** The current backstop window (pg-boss singletonSeconds slots are aligned to the epoch). */
const deferredSlotNow = () => Math.floor(Date.now() / (DEFERRED_EMBED_SECONDS * 1000));

export interface MemoryServiceOptions {
  /** pgvector present (`vector` columns) or the exact scan over `real[]`. */
  vector: boolean;
  maxContentBytes: number;
  chunkSize: number;
  chunkOverlap: number;
  embedBatch: number;
  /** Without pgvector: bytes of sketches the process keeps for ranking (memory.sketch-index.ts). */
  sketchIndexBytes: number;
}

/** Who the accounts are: the assistant (characters, its one source) and any user (users). */
export interface MemoryAccounts {
  assistantUserId(): Promise<number>;
  identity(id: number): Promise<{ role: string; name: string } | undefined>;
}

export interface Caller {
  id: number;
  admin: boolean;
}

export interface AddMemoryInput {
  userId: number;
  content: string;
  source: MemorySource;
  metadata?: Record<string, unknown> | undefined;
  /** spec: addMemory conversationId; defaults to metadata.conversationId. */
  conversationId?: number | undefined;
  createdBy?: number | undefined;
}

export interface RetrievedMemory {
  id: number;
  userId: number;
  content: string;
  source: MemorySource;
  tier: MemoryTier;
  conversationId: number | null;
  similarity: number | null;
  createdAt: Date;
}

// spec: "Conversation context (internal shape returned by context gathering)".
export interface NpcInfo {
  name: string;
  description: string;
  assistant_user_id: number;
}
export interface ConversationContext {
  playerState: unknown;
  playerQuests: unknown;
  playerInventory: unknown;
  npcInfo: NpcInfo;
  memoryContext: { worldContext: string; assistantContext: string; personalContext: string };
  systemWideKnowledge?: unknown;
  /** Beyond the spec: the retrieved memories behind memoryContext (prompt grounding, offline chat). */
  memories: RetrievedMemory[];
}

export interface GatherOptions {
  /** A query embedding the caller already made or is making (with the gateway's current
   * embedding model); resolving to undefined means full text only. */
  queryEmbedding?: number[] | Promise<number[] | undefined> | undefined;
  /** Memories per tier in the context strings. */
  perTier?: { world?: number; assistant?: number; personal?: number };
  /** What the caller knows of the NPC, instead of reading the NPC's name. */
  npcInfo?: NpcInfo | Promise<NpcInfo> | undefined;
}

export function toDto(m: repo.MemoryRow): MemoryDto {
  return {
    id: m.id,
    userId: m.user_id,
    content: m.content,
    source: m.source,
    tier: m.tier,
    metadata: m.metadata,
    conversationId: m.conversation_id,
    createdAt: m.created_at.toISOString(),
    updatedAt: m.updated_at.toISOString(),
  };
}

export function toSearchResult(m: RetrievedMemory) {
  return {
    id: m.id,
    userId: m.userId,
    content: m.content,
    source: m.source,
    similarity: m.similarity,
    createdAt: m.createdAt.toISOString(),
  };
}

/** What addMemories answers: the rows as written (the same values a read would give). */
function dtos(list: repo.NewMemory[], ids: number[], at: Date): MemoryDto[] {
  const stamp = at.toISOString();
  return list.map((m, i) => ({
    id: ids[i]!,
    userId: m.userId,
    content: m.content,
    source: m.source,
    tier: m.tier,
    // As jsonb keeps it: JSON values only.
    metadata: JSON.parse(JSON.stringify(m.metadata)) as Record<string, unknown>,
    conversationId: m.conversationId,
    createdAt: stamp,
    updatedAt: stamp,
  }));
}

function retrieved(m: repo.MemoryRow, similarity: number | null): RetrievedMemory {
  return {
    id: m.id,
    userId: m.user_id,
    content: m.content,
    source: m.source,
    tier: m.tier,
    conversationId: m.conversation_id,
    similarity,
    createdAt: m.created_at,
  };
}

export class MemoryService {
  /** Without pgvector: the sketches ranked by the vector side (a cache checked on every search). */
  readonly sketches: SketchIndex | undefined;

  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    private readonly models: ModelGateway,
    private readonly log: Logger,
    private readonly opts: MemoryServiceOptions,
    private readonly accounts: MemoryAccounts,
  ) {
    this.sketches = opts.vector ? undefined : new SketchIndex({ maxBytes: opts.sketchIndexBytes });
    jobs.define({
      name: EMBED_JOB,
      schema: z
        .object({
          memoryIds: z.array(z.number().int().positive()).max(10_000),
          reembed: z.boolean().optional(),
        })
        .strict(),
      retryLimit: 10,
      retryDelay: 1,
      // Every addMemory enqueues a job, but one run embeds everything pending: fetch many per poll
      // so the ones left with nothing to do finish at once instead of one per polling interval.
      batchSize: 50,
      handler: async (data) => {
        await this.embedPending(data.memoryIds, data.reembed ?? false);
      },
    });
  }

  /** After the job queue started: re-embed in the background when the embedding model or size
   * changed since the stored embeddings were made (contract: "Memory"). */
  async start(): Promise<void> {
    // Chunks still queued (a job lost with a reset queue, or the 0012 migration re-embedding
    // everything on servers without pgvector): one job embeds them all.
    if (await embeddings.hasPending(this.db))
      await this.jobs.enqueue(this.db, EMBED_JOB, { memoryIds: [] }, { singletonKey: 'memory.pending' });
    const stale = await embeddings.hasStaleEmbeddings(this.db, {
      model: this.models.embeddingModel,
      dims: this.models.embeddingDimensions,
    });
    if (stale) {
      this.log.info(
        { model: this.models.embeddingModel },
        'embedding model or size changed: re-embedding memories',
      );
      await this.jobs.enqueue(
        this.db,
        EMBED_JOB,
        { memoryIds: [], reembed: true },
        { singletonKey: 'memory.reembed' },
      );
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Writing

  private checkContent(content: string, path = 'body.content'): void {
    const problem = contentProblem(content, this.opts.maxContentBytes);
    if (problem) throw validationFailed([{ path, message: problem }]);
  }

  /** The spec's addMemory, for callers that already decided the owner (training, reflections,
   * chat). Runs in the given transaction (the job then exists exactly when the memory does), or
   * in its own. */
  async addMemory(input: AddMemoryInput, trx?: Trx): Promise<MemoryDto> {
    const [m] = await this.addMemories([input], trx);
    return m!;
  }

  /** Several memories in one transaction and one embedding job (ingestion, benchmarks).
   * `deferEmbedding`: the chat turn's exchange. Its chunks are embedded together with the next
   * turn's query (spec: at most one embedding request per message); one delayed job per window
   * (DEFERRED_EMBED_SECONDS) is the backstop when no next turn comes. With a local embedder there is
   * no request to save: every memory, the exchange included, is embedded here. */
  async addMemories(
    inputs: AddMemoryInput[],
    trx?: Trx,
    opts: { deferEmbedding?: boolean } = {},
  ): Promise<MemoryDto[]> {
    inputs.forEach((i, n) =>
      this.checkContent(i.content, inputs.length > 1 ? `memories.${n}.content` : 'body.content'),
    );
    if (inputs.length === 0) return [];
    const list: repo.NewMemory[] = inputs.map((input) => {
      const metadata = input.metadata ?? {};
      return {
        userId: input.userId,
        content: input.content,
        source: input.source,
        tier: tierOf(input.source),
        metadata,
        conversationId:
          input.conversationId ??
          (typeof metadata.conversationId === 'number' ? metadata.conversationId : null),
        createdBy: input.createdBy ?? null,
      };
    });
    const chunks = list.flatMap((m, memory) =>
      chunkText(m.content, this.opts.chunkSize, this.opts.chunkOverlap).map((content, index) => ({
        memory,
        index,
        content,
      })),
    );
    const local = this.models.embedsLocally;
    // A chat exchange's job is only the backstop for a conversation that stops: one per window
    // serves every exchange of the window (it embeds all that still waits when it runs, after the
    // window's last exchange), instead of a job per turn that mostly finds nothing to do. pg-boss
    // keeps one job per window (singletonSeconds slots of the epoch), starting a window after it
    // was sent, so after the slot's last exchange. Once this process has committed one for the
    // current slot, sending more only costs the turn a statement (each node still sends its own
    // first one: this remembers, it does not coordinate).
    const slot = deferredSlotNow();
    const sendBackstop = opts.deferEmbedding === true && slot !== this.deferredSlot;
    const run = async (t: Executor, afterCommit?: (cb: () => void) => void) => {
      const written = repo.insertMemoriesWithChunks(t, list, chunks, { queue: !local });
      if (!local) {
        const { ids, at } = await written;
        // spec: Memory rule 2, embedding happens asynchronously, in a job sent with this transaction.
        if (sendBackstop) {
          await this.jobs.enqueue(
            t,
            EMBED_JOB,
            { memoryIds: [] },
            {
              startAfterSeconds: DEFERRED_EMBED_SECONDS,
              singletonKey: 'memory.deferred',
              singletonSeconds: DEFERRED_EMBED_SECONDS,
            },
          );
          afterCommit?.(() => (this.deferredSlot = slot));
        } else if (!opts.deferEmbedding) await this.jobs.enqueue(t, EMBED_JOB, { memoryIds: ids });
        return dtos(list, ids, at);
      }
      const [{ ids, chunkIds, at }, embedded] = await Promise.all([
        written,
        this.embedHere(
          t,
          chunks.map((c) => c.content),
        ),
      ]);
      const stored = embeddings.insertEmbeddings(
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
      // The answer is built while the embeddings are written.
      const out = dtos(list, ids, at);
      await stored;
      return out;
    };
    if (trx) return run(trx);
    // A chat exchange whose window already has its backstop job needs no transaction: the memory
    // and its chunks (listed in the queue) are one statement.
    if (opts.deferEmbedding && !local && !sendBackstop) return run(this.db);
    return transaction(this.db, run);
  }
  /** The window (DEFERRED_EMBED_SECONDS slot) whose backstop job this process has committed. */
  private deferredSlot = -1;

  /** The chunks of an edited memory: embedded here with a local embedder, else by the job. */
  private async addChunks(t: Trx, m: repo.MemoryRow, texts: string[]): Promise<void> {
    if (!this.models.embedsLocally) {
      await repo.insertChunks(t, m, texts, { queue: true });
      await this.jobs.enqueue(t, EMBED_JOB, { memoryIds: [m.id] });
      return;
    }
    const [ids, embedded] = await Promise.all([
      repo.insertChunks(t, m, texts, { queue: false }),
      this.embedHere(t, texts),
    ]);
    await embeddings.insertEmbeddings(
      t,
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

  /** With the local embedder: the texts' embeddings, in the form the columns take. Called right
   * after the statement that writes the chunks was issued on `t`: it first lets that statement
   * go out, then embeds while the database works (a worker thread for PGlite, a process for
   * PostgreSQL). Through the gateway, so the call is recorded like any other; it cannot fail or
   * wait on the network, which is what makes it acceptable inside a transaction. */
  private async embedHere(
    t: Executor,
    texts: string[],
  ): Promise<{ model: string; encoded: encoding.EncodedEmbeddings }> {
    const types = this.opts.vector ? this.vectorTypes(t) : undefined;
    await nextTurn();
    const result = await this.models.embed(texts, 'memory.embed');
    return {
      model: result.model,
      encoded: encoding.encodeEmbeddings(this.opts.vector, await types, result.embeddings),
    };
  }

  private types: Promise<embeddings.VectorTypes> | undefined;

  /** pgvector's type OIDs, looked up once (on the executor at hand: on PGlite an open transaction
   * holds the only connection). */
  private vectorTypes(executor: Executor): Promise<embeddings.VectorTypes> {
    this.types ??= embeddings.vectorTypes(executor).catch((err: unknown) => {
      this.types = undefined;
      throw err;
    });
    return this.types;
  }

  private async encode(embeddings: number[][]): Promise<encoding.EncodedEmbeddings> {
    const types = this.opts.vector ? await this.vectorTypes(this.db) : undefined;
    return encoding.encodeEmbeddings(this.opts.vector, types, embeddings);
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
    return transaction(this.db, async (trx) => {
      const m = await this.own(callerId, id, trx);
      const metadata = changes.metadata ?? m.metadata;
      const conversationId = typeof metadata.conversationId === 'number' ? metadata.conversationId : null;
      const updated = (await repo.updateMemory(trx, id, {
        ...(changes.content !== undefined ? { content: changes.content } : {}),
        ...(changes.metadata !== undefined
          ? { metadata: JSON.stringify(changes.metadata), conversation_id: conversationId }
          : {}),
      }))!;
      if (changes.content !== undefined || conversationId !== m.conversation_id) {
        // Fresh chunks have no embedding; a job embedding the old ones writes to rows that are gone.
        await repo.deleteChunks(trx, id);
        await this.addChunks(
          trx,
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

  // ---------------------------------------------------------------------------------------------
  // Embedding

  /** The job: embeds chunks lacking an embedding of the current model and size, those of the
   * given memories first, in batches of one request each. Idempotent (it only fills what is
   * missing); a failure is recorded on the chunks and the job retries with backoff. */
  async embedPending(memoryIds: number[], reembed = false): Promise<number> {
    const model = this.models.embeddingModel;
    const dims = this.models.embeddingDimensions;
    const batch = this.opts.embedBatch;
    let done = 0;
    for (let round = 0; round < ROUNDS_PER_RUN; round++) {
      const rows = reembed
        ? await embeddings.staleChunks(this.db, { model, dims, limit: batch })
        : await embeddings.pendingChunks(this.db, { limit: batch, memoryIds });
      if (rows.length === 0) return done;
      let result;
      try {
        result = await this.models.embed(
          rows.map((r) => r.content),
          'memory.embed',
        );
      } catch (err) {
        await embeddings.recordEmbedFailure(
          this.db,
          rows.map((r) => r.id),
          err instanceof Error ? err.message : String(err),
        );
        throw err;
      }
      await embeddings.writeEmbeddings(
        this.db,
        this.opts.vector,
        result.model,
        rows.map((r) => r.id),
        await this.encode(result.embeddings),
      );
      done += rows.length;
    }
    // More is waiting: a fresh job continues, so one run never holds the worker for long.
    await this.jobs.enqueue(this.db, EMBED_JOB, { memoryIds: [], ...(reembed ? { reembed } : {}) });
    return done;
  }

  /** Embeds a query, in the same request as chunks still waiting for their embedding (spec: at
   * most one embedding request per chat turn). Undefined when the provider fails: callers then
   * retrieve by full text alone. */
  async embedQuery(text: string, opts: { includePending?: boolean } = {}): Promise<number[] | undefined> {
    if (!opts.includePending) return this.embedQueryBatched(text, 0).embedding;
    const batched = this.embedQueryBatched(text);
    const [embedding] = await Promise.all([batched.embedding, batched.store()]);
    return embedding;
  }

  /** The query's embedding as soon as the request answers; and `store`, which writes the pending
   * chunks embedded in the same request when called: a chat turn calls it once its reply is sent,
   * so the write (their sketches, one statement) does not compete with the turn's retrieval.
   * `store` never rejects and runs once: a failed write, or one never asked for, leaves the chunks
   * queued, and the embedding job (their delayed backstop) embeds them later. A local embedder
   * has no request to share (memories are embedded as they are written), so it embeds the query
   * alone. */
  embedQueryBatched(
    text: string,
    pendingLimit = this.models.embedsLocally ? 0 : Math.max(0, this.opts.embedBatch - 1),
    /** Nothing is requested before it resolves (a chat turn's rate limit); the pending chunks are
     * read meanwhile. When it rejects, so do both promises' sources, quietly: the embedding
     * resolves undefined and nothing is stored. */
    gate?: Promise<unknown>,
  ): { embedding: Promise<number[] | undefined>; store: () => Promise<void> } {
    let refused = false;
    const request = (async () => {
      const read =
        pendingLimit > 0 ? embeddings.pendingChunks(this.db, { limit: pendingLimit }) : Promise.resolve([]);
      read.catch(() => undefined);
      if (gate)
        await gate.catch((err: unknown) => {
          refused = true;
          throw err;
        });
      const pending = await read;
      return {
        pending,
        result: await this.models.embed([text, ...pending.map((p) => p.content)], 'memory.query'),
      };
    })();
    const embedding = request.then(
      ({ result }) => result.embeddings[0],
      (err: unknown) => {
        if (!refused)
          this.log.warn(
            { err: err instanceof Error ? err.message : err },
            'query embedding failed; retrieving by full text only',
          );
        return undefined;
      },
    );
    let stored: Promise<void> | undefined;
    const store = () =>
      (stored ??= request
        .then(
          async ({ pending, result }) => {
            if (pending.length === 0) return;
            await embeddings.writeEmbeddings(
              this.db,
              this.opts.vector,
              result.model,
              pending.map((p) => p.id),
              await this.encode(result.embeddings.slice(1)),
            );
          },
          () => undefined,
        )
        .catch((err: unknown) => {
          this.log.warn(
            { err: err instanceof Error ? err.message : err },
            'storing embeddings made with a query failed; they stay queued for the embedding job',
          );
        }));
    return { embedding, store };
  }

  async embeddingStatus() {
    return embeddings.embeddingStats(this.db, {
      model: this.models.embeddingModel,
      dims: this.models.embeddingDimensions,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Retrieval

  /** Chunked hybrid retrieval (spec: Memory rule 1, "Conversation context"): exact vector scan and
   * full text over the scope, fused by RRF into a similarity in [0, 1], one result per memory,
   * most relevant first. With no usable embedding it runs on full text alone. */
  async retrieve(
    scope: search.Scope,
    text: string,
    limit: number,
    opts: {
      conversationId?: number | undefined;
      /** Made or being made by the caller; without it (and unless `embed` is false) the query is
       * embedded here. */
      queryEmbedding?: number[] | Promise<number[] | undefined> | undefined;
      embed?: boolean;
    } = {},
  ): Promise<RetrievedMemory[]> {
    const made = opts.queryEmbedding ?? (opts.embed === false ? undefined : this.embedQuery(text));
    const model = this.models.embeddingModel;
    const rows = await search.searchChunks(this.db, this.opts.vector, {
      ...scope,
      text,
      candidates: Math.max(50, limit * 5),
      embedding:
        made === undefined
          ? undefined
          : Promise.resolve(made).then((values) => (values ? { values, model } : undefined)),
      sketches: this.sketches,
    });
    const embedding = await made;
    const vectorRanks = new Map(
      rows
        .filter((r) => r.distance !== null)
        .sort((a, b) => a.distance! - b.distance! || a.id - b.id)
        .map((r, i) => [r.id, i + 1]),
    );
    const textRanks = new Map(
      rows
        .filter((r) => r.rank !== null)
        .sort((a, b) => b.rank! - a.rank! || a.id - b.id)
        .map((r, i) => [r.id, i + 1]),
    );
    const hits: ChunkHit[] = rows.map((r) => ({
      chunkId: r.id,
      memoryId: r.memory_id,
      chunkIndex: r.chunk_index,
      conversationId: r.conversation_id,
      vectorRank: vectorRanks.get(r.id),
      textRank: textRanks.get(r.id),
    }));
    const fused = fuseHits(hits, { sides: embedding ? 2 : 1, conversationId: opts.conversationId }).slice(
      0,
      limit,
    );
    const memories = new Map(
      (
        await repo.findByIds(
          this.db,
          fused.map((f) => f.memoryId),
        )
      ).map((m) => [m.id, m]),
    );
    return fused.flatMap((f) => {
      const m = memories.get(f.memoryId);
      return m ? [retrieved(m, f.similarity)] : [];
    });
  }

  /** Deletes the sketch index's old tombstones (without pgvector; the maintenance job, hourly). */
  async sweep(): Promise<number> {
    return this.sketches ? search.sweepSketchTombstones(this.db, TOMBSTONE_HOURS) : 0;
  }

  /** For /api/admin/health: without pgvector, this process's sketch index (parts, rows, bytes). */
  sketchIndexStats(): { parts: number; rows: number; bytes: number } | undefined {
    return this.sketches?.stats();
  }

  /** For the admin statistics: memories by tier. */
  async countByTier(): Promise<{ tier: string; count: number }[]> {
    const rows = await repo.countByTier(this.db);
    return rows.map((m) => ({ tier: m.tier, count: Number(m.n) }));
  }

  /** GET /api/assistant/memory. A non-admin may only search as themselves. */
  async search(
    caller: Caller,
    q: {
      query?: string | undefined;
      userId?: number | undefined;
      npcUserId?: number | undefined;
      source?: MemorySource | undefined;
      limit: number;
      conversationId?: number | undefined;
    },
  ): Promise<RetrievedMemory[]> {
    const userId = q.userId ?? caller.id;
    if (userId !== caller.id && !caller.admin) throw forbidden("You may not read another user's memories");
    const scope = { userId, npcUserId: q.npcUserId, source: q.source };
    if (!q.query?.trim())
      return (await search.newestInScope(this.db, scope, q.limit)).map((m) => retrieved(m, null));
    return this.retrieve(scope, q.query, q.limit, { conversationId: q.conversationId });
  }

  // ---------------------------------------------------------------------------------------------
  // Context gathering

  /** Other modules fill the context's slots (inventory, quests, character state, NPC info). A
   * provider that fails leaves its slot at the default; the chat turn goes on. */
  /** spec: "Conversation context". Retrieval covers the three tiers (the player's memories, the
   * world, the NPC's core) in one hybrid search; the conversation id boosts continuity. The
   * player's state, quests and inventory are left empty here: the chat turn reads the inventory
   * summary itself, and quests do not exist yet. */
  async gatherContext(
    playerUserId: number,
    npcUserId: number,
    input: string,
    conversationId?: number,
    options: GatherOptions = {},
  ): Promise<ConversationContext> {
    const per = { world: 4, assistant: 4, personal: 6, ...options.perTier };
    // Not awaited: retrieval's full-text side starts while the embedding is made.
    const queryEmbedding = options.queryEmbedding ?? this.embedQuery(input, { includePending: true });
    const memories = await this.retrieve(
      { userId: playerUserId, npcUserId },
      input,
      per.world + per.assistant + per.personal + 10,
      { conversationId, queryEmbedding, embed: false },
    );
    const world = memories.filter((m) => m.tier === 'world').slice(0, per.world);
    const assistant = memories
      .filter((m) => m.userId === npcUserId && m.tier === 'assistant_core')
      .slice(0, per.assistant);
    const personal = memories
      .filter((m) => m.userId === playerUserId && m.tier !== 'world')
      .slice(0, per.personal);
    const lines = (ms: RetrievedMemory[]) => ms.map((m) => `- ${m.content}`).join('\n');
    let npc = await options.npcInfo;
    if (!npc) {
      const u = await this.accounts.identity(npcUserId);
      npc = { name: u?.name ?? '', description: '', assistant_user_id: npcUserId };
    }
    const used = new Set([...world, ...assistant, ...personal].map((m) => m.id));
    return {
      playerState: {},
      playerQuests: {},
      playerInventory: {},
      npcInfo: npc,
      memoryContext: {
        worldContext: lines(world),
        assistantContext: lines(assistant),
        personalContext: lines(personal),
      },
      memories: memories.filter((m) => used.has(m.id)),
    };
  }
}
