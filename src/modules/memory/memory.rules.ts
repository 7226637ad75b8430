// Pure memory rules, table-tested in memory.rules.test.ts: which tier a source lands in, who owns
// a new memory, how content is chunked, and how the two retrieval signals are fused.

// spec: Memory "Memory source values in use"; contract: "Memory": the core-tier sources
// belong to the owning character, vision_analysis is shared.
export const SOURCE_TIER = {
  world: 'world',
  assistant_core: 'assistant_core',
  shared: 'shared',
  core_belief: 'assistant_core',
  core_beliefs_encoding: 'assistant_core',
  manual_ingestion_text: 'assistant_core',
  document_ingestion: 'assistant_core',
  ingested_screenshot: 'assistant_core',
  image_ocr_extraction: 'assistant_core',
  vision_analysis: 'shared',
  // An observer's reflection on its timeline (contract: "Observer"), the assistant's own.
  observer_reflection: 'assistant_core',
} as const;

export type MemorySource = keyof typeof SOURCE_TIER;

/** Memories that quote every user's activity (an observer's reflections on its timeline): they
 * stay with the observer, never retrieved into a player's turn. */
export const OBSERVER_ONLY_SOURCES: readonly MemorySource[] = ['observer_reflection'];

/** Whether a retrieved memory may reach a chat turn: an observer-only one only a turn routed to the
 * SYSTEM protocol (a CSO's, never a channel's claim) may read. */
export function readableInTurn(m: { source: MemorySource }, category: string): boolean {
  return category === 'SYSTEM' || !OBSERVER_ONLY_SOURCES.includes(m.source);
}
export type MemoryTier = (typeof SOURCE_TIER)[MemorySource];
export const MEMORY_SOURCES = Object.keys(SOURCE_TIER) as [MemorySource, ...MemorySource[]];
export const MEMORY_TIERS = ['world', 'assistant_core', 'shared'] as const;

export function tierOf(source: MemorySource): MemoryTier {
  return SOURCE_TIER[source];
}

export type OwnerDecision =
  | { ok: true; ownerId: number; tier: MemoryTier; mustBeCharacter: boolean }
  | { ok: false; reason: 'forbidden'; detail: string };

/** Who owns a memory written by `caller` (contract: "Memory"): non-admins write `shared`
 * memories for themselves only; admins write any source for anyone, but `world` always belongs to
 * the assistant's own user and the core tier to a character (the assistant by default). */
export function decideOwner(input: {
  source: MemorySource;
  requestedUserId: number | undefined;
  caller: { id: number; admin: boolean };
  assistantUserId: number;
}): OwnerDecision {
  const tier = tierOf(input.source);
  const { caller, requestedUserId } = input;
  if (!caller.admin) {
    if (input.source !== 'shared')
      return {
        ok: false,
        reason: 'forbidden',
        detail: 'Only administrators may write memories of this source',
      };
    if (requestedUserId !== undefined && requestedUserId !== caller.id)
      return { ok: false, reason: 'forbidden', detail: "You may not write another user's memories" };
    return { ok: true, ownerId: caller.id, tier, mustBeCharacter: false };
  }
  switch (tier) {
    case 'world':
      return { ok: true, ownerId: input.assistantUserId, tier, mustBeCharacter: false };
    case 'assistant_core':
      return { ok: true, ownerId: requestedUserId ?? input.assistantUserId, tier, mustBeCharacter: true };
    case 'shared':
      return { ok: true, ownerId: requestedUserId ?? caller.id, tier, mustBeCharacter: false };
  }
}

/** Splits long content into overlapping chunks, cutting at sentence or word boundaries where it
 * can, so a fact that straddles a cut is whole in at least one chunk. Short content is one chunk. */
export function chunkText(text: string, size: number, overlap: number): string[] {
  if (text.length <= size) return [text];
  const step = Math.max(1, size - Math.min(overlap, size - 1));
  const chunks: string[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(start + size, text.length);
    if (end < text.length) {
      const window = text.slice(start, end);
      const minCut = Math.floor(size * 0.6);
      const sentence = Math.max(
        window.lastIndexOf('. '),
        window.lastIndexOf('! '),
        window.lastIndexOf('? '),
        window.lastIndexOf('\n'),
      );
      const space = window.lastIndexOf(' ');
      if (sentence >= minCut) end = start + sentence + 1;
      else if (space >= minCut) end = start + space;
    }
    const piece = text.slice(start, end).trim();
    if (piece) chunks.push(piece);
    if (end >= text.length) break;
    let next = Math.max(end - overlap, start + 1);
    if (end - start < step) next = end;
    // Start the next chunk at a word boundary.
    const ws = text.indexOf(' ', next);
    if (ws !== -1 && ws < end) next = ws + 1;
    start = next;
  }
  return chunks;
}

export interface ChunkHit {
  chunkId: number;
  memoryId: number;
  chunkIndex: number;
  conversationId: number | null;
  /** 1-based rank on the vector side, when the chunk was among its candidates. */
  vectorRank?: number | undefined;
  /** 1-based rank on the full-text side. */
  textRank?: number | undefined;
}

export interface FuseOptions {
  /** RRF constant (60 in the original paper). */
  k?: number;
  /** How many signals took part (1 when the query could not be embedded). */
  sides: 1 | 2;
  conversationId?: number | undefined;
  conversationBoost?: number;
  neighbourBonus?: number;
}

export interface FusedMemory {
  memoryId: number;
  chunkId: number;
  similarity: number;
}

/** Reciprocal rank fusion of the vector and full-text rankings, normalised so the best possible
 * chunk (first on every side) scores 1; then deduplicated per memory (its best chunk), with a
 * bonus when a neighbouring chunk also matched (continuity) and a boost for memories of the same
 * conversation (spec: "The conversation id boosts chunk continuity"). Result in [0, 1], best first. */
export function fuseHits(hits: ChunkHit[], opts: FuseOptions): FusedMemory[] {
  const k = opts.k ?? 60;
  const max = opts.sides / (k + 1);
  const boost = opts.conversationBoost ?? 0.2;
  const neighbour = opts.neighbourBonus ?? 0.05;
  const byMemory = new Map<
    number,
    { best: FusedMemory; indexes: Set<number>; bestIndex: number; conversationId: number | null }
  >();
  for (const h of hits) {
    const rrf = (h.vectorRank ? 1 / (k + h.vectorRank) : 0) + (h.textRank ? 1 / (k + h.textRank) : 0);
    const s = Math.min(1, rrf / max);
    const entry = byMemory.get(h.memoryId);
    if (!entry) {
      byMemory.set(h.memoryId, {
        best: { memoryId: h.memoryId, chunkId: h.chunkId, similarity: s },
        indexes: new Set([h.chunkIndex]),
        bestIndex: h.chunkIndex,
        conversationId: h.conversationId,
      });
      continue;
    }
    entry.indexes.add(h.chunkIndex);
    if (s > entry.best.similarity) {
      entry.best = { memoryId: h.memoryId, chunkId: h.chunkId, similarity: s };
      entry.bestIndex = h.chunkIndex;
    }
  }
  const out: FusedMemory[] = [];
  for (const e of byMemory.values()) {
    let s = e.best.similarity;
    if (e.indexes.has(e.bestIndex - 1) || e.indexes.has(e.bestIndex + 1)) s += neighbour * (1 - s);
    if (opts.conversationId !== undefined && e.conversationId === opts.conversationId) s += boost * (1 - s);
    out.push({ ...e.best, similarity: Math.round(Math.min(1, Math.max(0, s)) * 1e6) / 1e6 });
  }
  return out.sort((a, b) => b.similarity - a.similarity || b.memoryId - a.memoryId);
}

/** Content is measured in UTF-8 bytes against MEMORY_MAX_CONTENT. */
export function contentProblem(content: string, maxBytes: number): string | null {
  if (content.trim().length === 0) return 'must not be empty';
  const bytes = Buffer.byteLength(content, 'utf8');
  if (bytes > maxBytes) return `must be at most ${maxBytes} bytes (got ${bytes})`;
  return null;
}
