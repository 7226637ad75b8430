// The embedding pipeline: the pending chunks' embeddings (the memory.embed job), the query's
// embedding (batched with chunks still waiting for theirs), re-embedding after a change of model
// or size, and with the local embedder the embeddings made beside a write.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Db, Executor } from '../../platform/db/database.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { EmbeddingValues } from '../../platform/models/provider.js';
import * as embeddings from './memory.embeddings.repository.js';
import * as encoding from './memory.encoding.js';
import { EMBED_JOB } from './memory.jobs.js';

/** Batches one job run embeds before handing the rest to a fresh job (keeps runs short). */
const ROUNDS_PER_RUN = 50;
/** How long a live worker holds the chunks it sent to the model (memory_embed_queue.claimed_until):
 * longer than a request with its retries normally takes. A live worker slower than this only
 * costs a second embedding of its batch. The claim names its holder's process
 * (platform/db/liveness.ts), so a dead one's batch is free as soon as that process stops beating
 * (NODE_TIMEOUT_SECONDS; at once on the embedded database, after a restart), not after this lease. */
export const CLAIM_SECONDS = 300;
/** A job run that leaves chunks under others' claims schedules one run for when the first claim
 * is free (its lease lapses or its holder stops beating, in case their worker died): one such job
 * per window of this many seconds, starting after more than a window, so that run can schedule
 * its own successor. */
const CLAIMED_FOLLOW_UP_SECONDS = 10;
/** The claim a chat exchange's chunks are written under (memory.service.ts, `deferEmbedding`):
 * this process holds them for its next query request, which takes them along in the first half
 * of it, so that request and its write end well within the claim; past that, they are the job's
 * once the claim is free. */
export const HELD_SECONDS = 120;

/** A chunk this process wrote under its own claim, for its next query request. */
export type HeldChunk = embeddings.PendingChunk;

export class MemoryEmbedding {
  constructor(
    private readonly db: Db,
    private readonly jobs: JobQueue,
    private readonly models: ModelGateway,
    private readonly log: Logger,
    private readonly opts: { vector: boolean; embedBatch: number; claimHolder: string; now?: () => number },
  ) {}

  /** Chunks written under this process's claim, oldest first, with the time (ms) until which a
   * query request may take them along. */
  private held: { chunk: HeldChunk; usableUntil: number }[] = [];

  private now(): number {
    return this.opts.now?.() ?? Date.now();
  }

  /** The claim to write `count` new chunks under, for this process's next query request to take
   * along without reading the queue; undefined when they would not fit in one request beside the
   * chunks already held (they are queued for the job then), or with a local embedder. */
  claimToHold(count: number): { holder: string; leaseSeconds: number } | undefined {
    if (this.models.embedsLocally || this.held.length + count > this.opts.embedBatch - 1) return undefined;
    return { holder: this.opts.claimHolder, leaseSeconds: HELD_SECONDS };
  }

  /** Chunks just written (committed) under `claimToHold`'s claim: their text, the index of their
   * memory in `memoryIds`, and their ids in `chunkIds`. */
  hold(chunks: { memory: number; content: string }[], chunkIds: number[], memoryIds: number[]): void {
    const usableUntil = this.now() + (HELD_SECONDS * 1000) / 2;
    chunks.forEach((c, i) => {
      const chunk = { id: chunkIds[i]!, memory_id: memoryIds[c.memory]!, content: c.content };
      this.held.push({ chunk, usableUntil });
    });
  }

  /** Up to `limit` held chunks, oldest first; those past their time are dropped (the job takes
   * them once their claim lapses). */
  private takeHeld(limit: number): HeldChunk[] {
    const now = this.now();
    this.held = this.held.filter((h) => h.usableUntil > now);
    return this.held.splice(0, limit).map((h) => h.chunk);
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

  /** With the local embedder: the texts' embeddings, in the form the columns take. Called right
   * after the statement that writes the chunks was issued on `t`: it first lets that statement
   * go out, then embeds while the database works (a worker thread for PGlite, a process for
   * PostgreSQL). Through the gateway, so the call is recorded like any other; it cannot fail or
   * wait on the network, which is what makes it acceptable inside a transaction. */
  async embedHere(
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

  private async encode(embeddings: EmbeddingValues[]): Promise<encoding.EncodedEmbeddings> {
    const types = this.opts.vector ? await this.vectorTypes(this.db) : undefined;
    return encoding.encodeEmbeddings(this.opts.vector, types, embeddings);
  }

  /** The job: embeds chunks lacking an embedding of the current model and size, those of the
   * given memories first, in batches of one request each. Each batch is claimed before it is
   * sent and written as soon as its request returns, so a crash costs at most the batch in
   * flight, and a run (a retry, another node's job, a chat turn) never sends a chunk another
   * worker holds. Idempotent (it only fills what is missing); a failure is recorded on the chunks,
   * releases them, and the job retries with backoff. `run` serves a caller outside the job
   * (`reembedHere`): how many rounds, and whether a job continues the work or follows claims. */
  async embedPending(
    memoryIds: number[],
    reembed = false,
    run: { rounds?: number; followUp?: boolean } = {},
  ): Promise<number> {
    const model = this.models.embeddingModel;
    const dims = this.models.embeddingDimensions;
    const batch = this.opts.embedBatch;
    let done = 0;
    const followUp = run.followUp ?? true;
    for (let round = 0; round < (run.rounds ?? ROUNDS_PER_RUN); round++) {
      const rows = reembed
        ? await embeddings.staleChunks(this.db, { model, dims, limit: batch })
        : await embeddings.claimPending(this.db, {
            limit: batch,
            memoryIds,
            leaseSeconds: CLAIM_SECONDS,
            holder: this.opts.claimHolder,
          });
      if (rows.length === 0) {
        if (!reembed && followUp) await this.followClaims();
        return done;
      }
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
    if (followUp)
      await this.jobs.enqueue(this.db, EMBED_JOB, { memoryIds: [], ...(reembed ? { reembed } : {}) });
    return done;
  }

  /** Re-embeds what another model or size made, then embeds what waits, in this process and
   * without the job queue (`npm run cli -- memory reembed`), one batch at a time; `onBatch` hears
   * of each. Resumable like the job: it only fills what is missing or stale. */
  async reembedHere(onBatch?: (done: number) => void): Promise<number> {
    let done = 0;
    for (const reembed of [true, false])
      for (;;) {
        const n = await this.embedPending([], reembed, { rounds: 1, followUp: false });
        if (n === 0) break;
        done += n;
        onBatch?.(done);
      }
    return done;
  }

  /** Chunks left under another worker's claim are that worker's to write; should it have died,
   * a run once the first claim is free takes them (one such job per window, whoever asks). */
  private async followClaims(): Promise<void> {
    const lapsesIn = await embeddings.claimedFor(this.db);
    if (lapsesIn === undefined) return;
    await this.jobs.enqueue(
      this.db,
      EMBED_JOB,
      { memoryIds: [] },
      {
        startAfterSeconds: Math.ceil(Math.max(lapsesIn, CLAIMED_FOLLOW_UP_SECONDS)) + 1,
        singletonKey: 'memory.claimed',
        singletonSeconds: CLAIMED_FOLLOW_UP_SECONDS,
      },
    );
  }

  /** Embeds a query, in the same request as the chunks this process holds for it (spec: at most
   * one embedding request per chat turn). Undefined when the provider fails: callers then
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
   * The chunks are the ones this process holds (`hold`: its earlier turns' exchanges, written
   * under its claim), so the request goes out at once, without reading the queue, and no other
   * turn or job sends them meanwhile; a failed request releases them at once. `store` never
   * rejects and runs once: a failed write, or one never asked for (a turn that failed, a process
   * that died), leaves the chunks queued under the claim, and the embedding job takes them once it
   * lapses or the process is dead. A local embedder has no request to share (memories are
   * embedded as they are written), so it embeds the query alone. */
  embedQueryBatched(
    text: string,
    pendingLimit = this.models.embedsLocally ? 0 : Math.max(0, this.opts.embedBatch - 1),
  ): { embedding: Promise<number[] | undefined>; store: () => Promise<void> } {
    const request = (async () => {
      // Held under this process's claim since they were written: no other turn or job sends them.
      const pending = pendingLimit > 0 ? this.takeHeld(pendingLimit) : [];
      try {
        return {
          pending,
          result: await this.models.embed([text, ...pending.map((p) => p.content)], 'memory.query'),
        };
      } catch (err) {
        // Failed: nothing was embedded, the claimed chunks go back to the queue at once (should
        // that fail too, their claim lapses and the job takes them then).
        await embeddings
          .releaseClaims(
            this.db,
            pending.map((p) => p.id),
          )
          .catch((releaseErr: unknown) =>
            this.log.warn({ err: releaseErr }, 'releasing the claims of a failed query embedding failed'),
          );
        throw err;
      }
    })();
    const embedding = request.then(
      // The query's vector goes on as plain numbers (it is read by several parts of the search);
      // a model server's already are.
      ({ result }) => {
        const v = result.embeddings[0];
        return v === undefined || Array.isArray(v) ? v : Array.from(v);
      },
      (err: unknown) => {
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
            'storing embeddings made with a query failed; they stay queued for the embedding job (once their claim is free)',
          );
        }));
    return { embedding, store };
  }

  /** The embeddings' state for the admin health and `memory reembed`: the current model, the
   * chunks embedded by it, left to re-embed (`stale`) or to embed (`pending`), and `progress`, the
   * share of chunks embedded by the current model. */
  async embeddingStatus() {
    const model = this.models.embeddingModel;
    const stats = await embeddings.embeddingStats(this.db, { model, dims: this.models.embeddingDimensions });
    return {
      model,
      ...stats,
      reembedding: stats.stale > 0,
      progress: stats.total === 0 ? 1 : Math.round((stats.current / stats.total) * 1000) / 1000,
    };
  }
}
