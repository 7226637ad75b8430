// The sketch index's storage (memory.sketch-index.ts): one part's rows in slots of parallel typed
// arrays, the sketches back to back and the int8 embeddings in a buffer of the part's own, and the
// small codes its filters compare.
import type * as search from './memory.search.repository.js';
import type { MemoryTier } from './memory.rules.js';
import { int8View, SKETCH_BITS } from './memory.sketch.js';

const SKETCH_BYTES = SKETCH_BITS / 8;
/** Bytes a slot costs besides its embedding: id, owner, tier, source, model/size, sketch, the
 * chunk's keys (memory, position, conversation) and the embedding's reference. */
const SLOT_BYTES = 8 + 8 + 1 + 1 + 2 + SKETCH_BYTES + 8 + 4 + 8 + 4 + 2;

/** A row held (not a tombstone). */
export type HeldRow = Extract<search.SketchRow, { gone: false }>;

export const TIERS: MemoryTier[] = ['world', 'assistant_core', 'shared'];
export const NONE = 0xffff;

/** Small codes for the strings a filter compares (sources; model and size), shared by all parts. */
export class Codes {
  private readonly codes = new Map<string, number>();
  of(key: string): number {
    let c = this.codes.get(key);
    if (c === undefined) this.codes.set(key, (c = this.codes.size));
    return c;
  }
  find(key: string): number | undefined {
    return this.codes.get(key);
  }
}

/** What a part holds: one user's rows (all tiers), or the world tier's (no `userId`). */
export interface PartId {
  key: string;
  userId?: number;
}

/** A part as a scope reads it: which of its rows belong to the scope. */
export interface PartUse extends PartId {
  tier?: number;
  /** Rows of this owner are excluded (the caller's own world rows are in their own part). */
  notOwner?: number;
  /** Rows outside the world tier count only without a conversation or in one of these. */
  conversations?: ReadonlySet<number>;
}

/** One part's rows in slots: parallel typed arrays, the sketches back to back. */
export class Part {
  size = 0;
  ids = new Float64Array(0);
  owners = new Float64Array(0);
  tiers = new Uint8Array(0);
  sources = new Uint8Array(0);
  kinds = new Uint16Array(0);
  sketches = new Uint8Array(0);
  memoryIds = new Float64Array(0);
  chunkIndexes = new Int32Array(0);
  /** NaN for none. */
  conversationIds = new Float64Array(0);
  /** The int8 embeddings, back to back in one buffer of the part's own (slot s's at
   * vectorAt[s], vectorLength[s] long): a view of each row as read would keep the whole pooled
   * buffer it was decoded into alive, about twice the bytes counted. */
  private vectors = new Int8Array(0);
  private vectorAt = new Int32Array(0);
  private vectorLength = new Uint16Array(0);
  private vectorsEnd = 0;
  /** Bytes of `vectors` no slot uses (removed or replaced by one of another length). */
  private vectorsUnused = 0;
  private readonly slots = new Map<number, number>();
  /** Requests for rows since `horizon`, and the latest applied: an older read finishing late is
   * not applied over a newer one (the newer saw everything it saw). */
  ticket = 0;
  applied = 0;

  constructor(
    readonly id: PartId,
    public horizon: string,
    /** When the latest read applied began. */
    public readAt: number,
  ) {}

  get key(): string {
    return this.id.key;
  }

  get bytes(): number {
    return this.ids.length * SLOT_BYTES + this.vectors.length;
  }

  /** Slot s's int8 embedding. */
  embedding(s: number): Int8Array {
    const at = this.vectorAt[s]!;
    return this.vectors.subarray(at, at + this.vectorLength[s]!);
  }

  private storeVector(s: number, bytes: Uint8Array, replacing: boolean): void {
    const v = int8View(bytes);
    if (replacing && this.vectorLength[s] === v.length) {
      this.vectors.set(v, this.vectorAt[s]);
      return;
    }
    if (replacing) {
      this.vectorsUnused += this.vectorLength[s]!;
      this.vectorLength[s] = 0;
    }
    if (this.vectorsEnd + v.length > this.vectors.length) this.packVectors(v.length);
    this.vectors.set(v, this.vectorsEnd);
    this.vectorAt[s] = this.vectorsEnd;
    this.vectorLength[s] = v.length;
    this.vectorsEnd += v.length;
  }

  /** Moves the slots' vectors to a buffer of their own, with room for `more` bytes (doubling). */
  private packVectors(more: number): void {
    let used = 0;
    for (let s = 0; s < this.size; s++) used += this.vectorLength[s]!;
    const next = new Int8Array(Math.max(4096, 2 * (used + more)));
    let end = 0;
    for (let s = 0; s < this.size; s++) {
      const at = this.vectorAt[s]!;
      const n = this.vectorLength[s]!;
      next.set(this.vectors.subarray(at, at + n), end);
      this.vectorAt[s] = end;
      end += n;
    }
    this.vectors = next;
    this.vectorsEnd = end;
    this.vectorsUnused = 0;
  }

  put(row: HeldRow, source: number, kind: number): void {
    let s = this.slots.get(row.chunk_id);
    const replacing = s !== undefined;
    if (s === undefined) {
      if (this.size === this.ids.length) this.grow(Math.max(64, this.size * 2));
      // Counted in `size` only once its vector is stored (a pack moves the first `size` slots).
      s = this.size;
      this.slots.set(row.chunk_id, s);
    }
    this.storeVector(s, row.embedding_i8, replacing);
    if (!replacing) this.size++;
    this.ids[s] = row.chunk_id;
    this.owners[s] = row.user_id;
    this.tiers[s] = TIERS.indexOf(row.tier);
    this.sources[s] = source;
    this.kinds[s] = kind;
    this.sketches.set(row.sketch.subarray(0, SKETCH_BYTES), s * SKETCH_BYTES);
    this.memoryIds[s] = row.memory_id;
    this.chunkIndexes[s] = row.chunk_index;
    this.conversationIds[s] = row.conversation_id ?? NaN;
  }

  /** The chunk's keys, as the search returns them. */
  keys(s: number): search.ChunkKey {
    const conversation = this.conversationIds[s]!;
    return {
      id: this.ids[s]!,
      memory_id: this.memoryIds[s]!,
      chunk_index: this.chunkIndexes[s]!,
      conversation_id: Number.isNaN(conversation) ? null : conversation,
    };
  }

  /** Drops a chunk: the last slot moves into its place. */
  remove(chunkId: number): void {
    const s = this.slots.get(chunkId);
    if (s === undefined) return;
    this.slots.delete(chunkId);
    this.vectorsUnused += this.vectorLength[s]!;
    const last = --this.size;
    if (s !== last) this.moveSlot(last, s);
    // Most of the buffer left unused (many deletes): packed, so the bytes counted stay the bytes used.
    if (this.vectorsUnused > this.vectorsEnd / 2) this.packVectors(0);
  }

  private moveSlot(last: number, s: number): void {
    this.vectorAt[s] = this.vectorAt[last]!;
    this.vectorLength[s] = this.vectorLength[last]!;
    this.ids[s] = this.ids[last]!;
    this.owners[s] = this.owners[last]!;
    this.tiers[s] = this.tiers[last]!;
    this.sources[s] = this.sources[last]!;
    this.kinds[s] = this.kinds[last]!;
    this.sketches.copyWithin(s * SKETCH_BYTES, last * SKETCH_BYTES, (last + 1) * SKETCH_BYTES);
    this.memoryIds[s] = this.memoryIds[last]!;
    this.chunkIndexes[s] = this.chunkIndexes[last]!;
    this.conversationIds[s] = this.conversationIds[last]!;
    this.slots.set(this.ids[s], s);
  }

  private grow(capacity: number): void {
    const grown = <T extends Float64Array | Int32Array | Uint8Array | Uint16Array>(a: T, n: number): T => {
      const b = new (a.constructor as new (n: number) => T)(n);
      b.set(a);
      return b;
    };
    this.ids = grown(this.ids, capacity);
    this.owners = grown(this.owners, capacity);
    this.tiers = grown(this.tiers, capacity);
    this.sources = grown(this.sources, capacity);
    this.kinds = grown(this.kinds, capacity);
    this.sketches = grown(this.sketches, capacity * SKETCH_BYTES);
    this.memoryIds = grown(this.memoryIds, capacity);
    this.chunkIndexes = grown(this.chunkIndexes, capacity);
    this.conversationIds = grown(this.conversationIds, capacity);
    this.vectorAt = grown(this.vectorAt, capacity);
    this.vectorLength = grown(this.vectorLength, capacity);
  }
}
