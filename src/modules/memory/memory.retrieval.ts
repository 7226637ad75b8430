// Retrieval: chunked hybrid search over a scope (vector and full text, fused), the search route,
// and the sketch index that ranks the vector side without pgvector.
import type { Db } from '../../platform/db/database.js';
import { forbidden } from '../../platform/http/problem.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { MemoryEmbedding } from './memory.embedding.js';
import { retrieved, type Caller, type RetrievedMemory } from './memory.mapping.js';
import type * as repo from './memory.repository.js';
import { Reranker } from './memory.rerank.js';
import { loadWordSimilarity } from '../../platform/models/words.js';
import { fuseHits, type ChunkHit, type MemorySource } from './memory.rules.js';
import * as search from './memory.search.repository.js';
import { SketchIndex, TOMBSTONE_HOURS } from './memory.sketch-index.js';

/** How many of the first stage's memories the second reranks (with their neighbours). On LoCoMo's
 * development split 20, 25 and 30 rank alike (recall@10 0.603, 0.603, 0.602) and 15 lower
 * (0.594); 20 reads and reranks a third fewer rows than 30. */
const RERANK_POOL = 20;
/** A memory of the caller's conversation is raised this share of the way to 1 (spec: "The
 * conversation id boosts chunk continuity"). */
const CONVERSATION_BOOST = 0.2;

export class MemoryRetrieval {
  /** Without pgvector: the sketches ranked by the vector side (a cache checked on every search). */
  readonly sketches: SketchIndex | undefined;
  /** The vector side: pgvector's exact scan, or the sketch index; retrieval does not branch on it. */
  private readonly index: search.VectorIndex;

  constructor(
    private readonly db: Db,
    private readonly models: ModelGateway,
    private readonly embedding: MemoryEmbedding,
    private readonly opts: { vector: boolean; sketchIndexBytes: number },
  ) {
    this.sketches = opts.vector ? undefined : new SketchIndex({ maxBytes: opts.sketchIndexBytes });
    this.index = this.sketches ?? search.pgvectorIndex;
  }

  private reranker: Promise<Reranker> | undefined;

  /** Chunked hybrid retrieval (spec: Memory rule 1, "Conversation context") in two stages. First,
   * an exact vector scan and full text over the scope, fused by RRF (one entry per memory); with no
   * usable embedding it runs on full text alone. Then the first RERANK_POOL memories and their
   * neighbours are read and reranked (memory.rerank.ts: word alignment weighted by the scope's own
   * word frequencies, the embeddings' cosine, the neighbours' relevance) into a similarity in
   * [0, 1], most relevant first. */
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
    const made = opts.queryEmbedding ?? (opts.embed === false ? undefined : this.embedding.embedQuery(text));
    const model = this.models.embeddingModel;
    const [rows, reranker] = await Promise.all([
      search.searchChunks(this.db, {
        ...scope,
        text,
        candidates: Math.max(50, limit * 5),
        embedding:
          made === undefined
            ? undefined
            : Promise.resolve(made).then((values) => (values ? { values, model } : undefined)),
        index: this.index,
      }),
      (this.reranker ??= loadWordSimilarity().then((w) => new Reranker(w))),
    ]);
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
      Math.max(RERANK_POOL, limit),
    );
    // A memory's cosine is its nearest chunk's.
    const cosines = new Map<number, number>();
    for (const r of rows)
      if (r.distance !== null)
        cosines.set(r.memory_id, Math.max(cosines.get(r.memory_id) ?? -1, 1 - r.distance));
    const read = await search.withNeighbours(
      this.db,
      fused.map((f) => f.memoryId),
    );
    const memories = new Map(read.map((m) => [m.id, m]));
    const links = new Map<number, { previous?: number; next?: number }>();
    const link = (id: number) => links.get(id) ?? links.set(id, {}).get(id)!;
    for (const m of read) {
      if (m.of === null) continue;
      if (m.side === 'previous') {
        link(m.of).previous = m.id;
        link(m.id).next = m.of;
      } else {
        link(m.of).next = m.id;
        link(m.id).previous = m.of;
      }
    }
    const candidates = fused.flatMap((f) => {
      const m = memories.get(f.memoryId);
      return m
        ? [
            {
              memoryId: m.id,
              content: m.content,
              cosine: cosines.get(m.id),
              fused: f.similarity,
              ...links.get(m.id),
            },
          ]
        : [];
    });
    const named = new Set(fused.map((f) => f.memoryId));
    const neighbours = new Map(
      [...memories.values()]
        .filter((m) => !named.has(m.id))
        .map((m) => [m.id, { content: m.content, ...links.get(m.id) }]),
    );
    const ranked = reranker.rerank(text, candidates, neighbours);
    const boost = (m: repo.RetrievalRow, s: number) =>
      opts.conversationId !== undefined && m.conversation_id === opts.conversationId
        ? s + CONVERSATION_BOOST * (1 - s)
        : s;
    return ranked
      .map((r) => ({ m: memories.get(r.memoryId)!, s: boost(memories.get(r.memoryId)!, r.similarity) }))
      .sort((a, b) => b.s - a.s || b.m.id - a.m.id)
      .slice(0, limit)
      .map(({ m, s }) => retrieved(m, Math.round(s * 1e6) / 1e6));
  }

  /** Deletes the sketch index's old tombstones (without pgvector; the maintenance job, hourly). */
  async sweep(): Promise<number> {
    return this.sketches ? search.sweepSketchTombstones(this.db, TOMBSTONE_HOURS) : 0;
  }

  /** For /api/admin/health: without pgvector, this process's sketch index (parts, rows, bytes). */
  sketchIndexStats(): { parts: number; rows: number; bytes: number } | undefined {
    return this.sketches?.stats();
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
}
