// The vector side without pgvector: the sketches and int8 embeddings of the scopes searched lately,
// kept in this process. A search ranks the scope by the sketches' Hamming distance here
// (memory.hamming.ts), instead of a scan of every sketch of the scope in SQL (~0.9 µs a row in
// PostgreSQL's executor: 6–11 ms for a user with 10,000 chunks; here ~0.3 ms), then reranks the
// nearest by the cosine of their int8 embeddings, also here (reading them, 1.5 KB each as float32,
// was the largest step of a chat turn).
//
// A cache, not state: the database stays the truth and every search first reads what changed
// since this process last looked, so searches on any node see every committed write and delete.
// - Each row of memory_embeddings carries the id of the transaction that wrote it (`xid`, set on
//   insert and update, migration 0016). A read notes its snapshot's xmin, the oldest transaction
//   still running then (the horizon): any row the read did not see was written by a transaction
//   with an id at least that (running then, or begun later). The next read asks for rows with
//   `xid >= horizon` of the parts it keeps: usually none or the few of the last exchange.
// - A deleted embedding leaves a tombstone with the deleting transaction's id (migration 0017),
//   read the same way: the index drops the chunk. Tombstones are swept after TOMBSTONE_HOURS; a
//   part not read for STALE_MS (far less) is read whole again instead of brought up to date.
// - The parts: one user's embeddings (all tiers; the caller's own, or an NPC's core tier), and
//   the world tier (any owner). Parts are evicted least recently used beyond `maxBytes`.
import type { Executor } from '../../platform/db/database.js';
import { HammingKernel } from './memory.hamming.js';
import * as search from './memory.search.repository.js';
import { cosineDistanceInt8, norm, SKETCH_BITS, sketchBytes } from './memory.sketch.js';
import { Codes, NONE, Part, TIERS, type HeldRow, type PartId, type PartUse } from './memory.sketch-parts.js';

/** A part not read for this long is read whole again (its tombstones may be swept meanwhile, and
 * a whole read costs less than a long delta). */
export const STALE_MS = 60 * 60_000;
/** Tombstones of deleted embeddings are kept this long (maintenance sweep). */
export const TOMBSTONE_HOURS = 24;
/** A part held, with the rows of it a search's scope reads. */
type Use = Omit<PartUse, keyof PartId> & { part: Part };

export class SketchIndex implements search.VectorIndex {
  private readonly parts = new Map<string, Part>();
  /** Full reads under way, shared by the searches that need the same part meanwhile. */
  private readonly loading = new Map<string, Promise<Part>>();
  private readonly kernel = new HammingKernel();
  private readonly sources = new Codes();
  private readonly kinds = new Codes();
  private distances = new Uint16Array(0);

  constructor(private readonly opts: { maxBytes: number; now?: () => number }) {}

  /** The parts a scope reads from, with the rows each contributes. */
  private keysOf(s: search.Scope): PartUse[] {
    const keys: PartUse[] = [
      {
        key: `user:${s.userId}`,
        userId: s.userId,
        ...(s.conversationIds && { conversations: new Set(s.conversationIds) }),
      },
      { key: 'world', tier: TIERS.indexOf('world'), notOwner: s.userId },
    ];
    for (const npc of new Set(search.scopeCharacters(s)))
      if (npc !== s.userId)
        keys.push({ key: `user:${npc}`, userId: npc, tier: TIERS.indexOf('assistant_core') });
    return keys;
  }

  /** Starts bringing the scope's parts up to date at once (a search does so while its query is
   * being embedded); the scan ranks them when the query is known. */
  open(db: Executor, scope: search.Scope): search.VectorScan {
    const ready = this.refresh(db, this.keysOf(scope));
    // Awaited by `nearest`; a search that never gets its embedding leaves it unawaited.
    ready.catch(() => undefined);
    return { ready, nearest: async (p) => this.rank(await ready, { ...scope, ...p }) };
  }

  /** The `count` nearest chunks of a scope (up to date first) by the cosine of their int8
   * embeddings, among the `pool` sketch-nearest; nearest first. */
  nearest(
    db: Executor,
    p: search.Scope & search.VectorQuery,
  ): Promise<(search.ChunkKey & { distance: number })[]> {
    return this.open(db, p).nearest(p, db);
  }

  private rank(
    uses: Use[],
    p: search.Scope & search.VectorQuery,
  ): (search.ChunkKey & { distance: number })[] {
    const kind = this.kinds.find(`${p.model}/${p.dim}`);
    const source = p.source === undefined ? undefined : this.sources.find(p.source);
    const pool = Math.max(p.pool, p.count);
    if (kind === undefined || (p.source !== undefined && source === undefined) || p.count <= 0) return [];
    const query = sketchBytes(p.query);

    // The distances of every slot of every part (NONE outside the scope), and their histogram,
    // whose cumulative counts give the distance of the count-th nearest without sorting them all.
    const total = uses.reduce((n, u) => n + u.part.size, 0);
    if (this.distances.length < total)
      this.distances = new Uint16Array(Math.max(total, this.distances.length * 2));
    const histogram = new Uint32Array(SKETCH_BITS + 1);
    let at = 0;
    const world = TIERS.indexOf('world');
    for (const { part, tier, notOwner, conversations } of uses) {
      const d = this.distances.subarray(at, at + part.size);
      this.kernel.distances(query, part.sketches, part.size, d);
      for (let s = 0; s < part.size; s++) {
        const conversation = part.conversationIds[s]!;
        if (
          part.kinds[s] !== kind ||
          (source !== undefined && part.sources[s] !== source) ||
          (tier !== undefined && part.tiers[s] !== tier) ||
          (notOwner !== undefined && part.owners[s] === notOwner) ||
          (conversations !== undefined &&
            part.tiers[s] !== world &&
            !Number.isNaN(conversation) &&
            !conversations.has(conversation))
        )
          d[s] = NONE;
        else histogram[d[s]!]!++;
      }
      at += part.size;
    }
    let limit = 0;
    let below = 0;
    for (; limit <= SKETCH_BITS; limit++) {
      if (below + histogram[limit]! >= pool) break;
      below += histogram[limit]!;
    }
    // The pool: every slot nearer than `limit` (fewer than `pool`), then those at `limit` with the
    // smallest chunk ids (ties by id, as a scan in SQL orders them). Only that tie is sorted: the
    // cosine orders the pool anyway.
    const members: { part: Part; slot: number; distance: number }[] = [];
    const tied: { part: Part; slot: number }[] = [];
    const qNorm = norm(p.query);
    at = 0;
    for (const { part } of uses) {
      for (let s = 0; s < part.size; s++) {
        const d = this.distances[at + s]!;
        if (d < limit)
          members.push({
            part,
            slot: s,
            distance: cosineDistanceInt8(p.query, qNorm, part.embedding(s)),
          });
        else if (d === limit) tied.push({ part, slot: s });
      }
      at += part.size;
    }
    if (below < pool)
      for (const x of tied.sort((a, b) => a.part.ids[a.slot]! - b.part.ids[b.slot]!).slice(0, pool - below))
        members.push({ ...x, distance: cosineDistanceInt8(p.query, qNorm, x.part.embedding(x.slot)) });
    return members
      .sort((a, b) => a.distance - b.distance || a.part.ids[a.slot]! - b.part.ids[b.slot]!)
      .slice(0, p.count)
      .map((x) => ({ ...x.part.keys(x.slot), distance: x.distance }));
  }

  /** Brings the scope's parts up to date: parts not held are read whole (one read per part at a
   * time, shared); one statement reads the held parts' rows written since their horizon. A part
   * this search read whole needs no more (that read began after the search did). */
  private async refresh(db: Executor, keys: PartUse[]): Promise<Use[]> {
    // Parts held are brought up to date while missing ones are read whole (at once, on separate
    // connections); a part whose full read another search had begun is brought up to date after.
    const held: Part[] = [];
    const joined: Promise<Part>[] = [];
    const parts = keys.map((k): Promise<Part> => {
      let part = this.parts.get(k.key);
      if (part && this.now() - part.readAt > STALE_MS) {
        this.parts.delete(k.key);
        part = undefined;
      }
      if (part) {
        this.touch(part);
        held.push(part);
        return Promise.resolve(part);
      }
      const pending = this.loading.get(k.key);
      if (pending) {
        joined.push(pending);
        return pending;
      }
      return this.load(db, k);
    });
    await Promise.all([this.update(db, held), ...joined]);
    if (joined.length) await this.update(db, await Promise.all(joined));
    const resolved = await Promise.all(parts);
    return keys.map((k, i) => ({
      part: resolved[i]!,
      tier: k.tier,
      notOwner: k.notOwner,
      conversations: k.conversations,
    }));
  }

  /** One statement reads the rows of `parts` written, and the embeddings deleted, since each one's
   * horizon. */
  private async update(db: Executor, parts: Part[]): Promise<void> {
    if (parts.length === 0) return;
    const startedAt = this.now();
    const tickets = parts.map((part) => ({ part, ticket: ++part.ticket }));
    const read = await search.sketchChanges(
      db,
      parts.map((part) => ({ userId: part.id.userId, since: part.horizon })),
    );
    tickets.forEach(({ part, ticket }, i) => {
      if (ticket <= part.applied) return;
      part.applied = ticket;
      part.horizon = read.horizon;
      part.readAt = startedAt;
      // A chunk id is never used again, so a tombstone and a row of the same chunk never meet.
      for (const row of read.rows)
        if (row.part !== i) continue;
        else if (row.gone) part.remove(row.chunk_id);
        else this.put(part, row);
    });
    // Usually nothing was written since: only new rows can grow a part past the limit.
    if (read.rows.length) this.evict();
  }

  private load(db: Executor, k: PartId): Promise<Part> {
    const loaded = (async () => {
      const startedAt = this.now();
      const read = await search.sketchRows(db, [{ userId: k.userId }]);
      const part = new Part({ key: k.key, userId: k.userId }, read.horizon, startedAt);
      for (const row of read.rows) if (!row.gone) this.put(part, row);
      this.parts.set(k.key, part);
      this.evict(part);
      return part;
    })().finally(() => this.loading.delete(k.key));
    this.loading.set(k.key, loaded);
    return loaded;
  }

  private put(part: Part, row: HeldRow): void {
    part.put(row, this.sources.of(row.source), this.kinds.of(`${row.model}/${row.dim}`));
  }

  private touch(part: Part): void {
    this.parts.delete(part.key);
    this.parts.set(part.key, part);
  }

  /** Least recently used parts go beyond maxBytes (never `keep`, the part just read). */
  private evict(keep?: Part): void {
    let bytes = 0;
    for (const part of this.parts.values()) bytes += part.bytes;
    for (const part of this.parts.values()) {
      if (bytes <= this.opts.maxBytes) break;
      if (part === keep) continue;
      this.parts.delete(part.key);
      bytes -= part.bytes;
    }
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  /** Parts held and their size (health, tests). */
  stats(): { parts: number; rows: number; bytes: number } {
    let rows = 0;
    let bytes = 0;
    for (const part of this.parts.values()) {
      rows += part.size;
      bytes += part.bytes;
    }
    return { parts: this.parts.size, rows, bytes };
  }
}
