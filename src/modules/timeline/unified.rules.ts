// Pure rules of an observer's unified timeline (contract: "Observer"): the filters, the opaque
// page cursor and what ties a cursor to the query that made it.
import { createHash } from 'node:crypto';

/** The filters of the unified timeline; each list means "any of". */
export interface TimelineFilter {
  eventTypes?: string[] | undefined;
  sources?: string[] | undefined;
  personaIds?: number[] | undefined;
  instanceId?: number | undefined;
  userId?: number | undefined;
  /** Full text on the event text (`websearch_to_tsquery('simple', q)`). */
  q?: string | undefined;
  /** `timelineAt` ≥ from (inclusive), ISO 8601 with an offset. */
  from?: string | undefined;
  /** `timelineAt` < to (exclusive). */
  to?: string | undefined;
}

export type TimelineOrder = 'asc' | 'desc';

/** Where a page ends: the last event's exact `timelineAt` (microseconds, UTC) and id. */
export interface PageKey {
  at: string;
  id: number;
}

/** A stable text of what a page was asked for: the same observer, filters and order give the
 * same text whatever the order of list values or of the query string. */
export function queryIdentity(observerId: number, f: TimelineFilter, order: TimelineOrder): string {
  const list = <T>(v: T[] | undefined) => (v && v.length ? [...new Set(v)].sort() : null);
  const instant = (v: string | undefined) => (v === undefined ? null : new Date(v).toISOString());
  return JSON.stringify([
    observerId,
    order,
    list(f.eventTypes),
    list(f.sources),
    list(f.personaIds),
    f.instanceId ?? null,
    f.userId ?? null,
    f.q ?? null,
    instant(f.from),
    instant(f.to),
  ]);
}

const fingerprint = (identity: string) =>
  createHash('sha256').update(identity).digest('base64url').slice(0, 16);

/** The opaque cursor of the next page: where the page ended, and the query it belongs to. */
export function encodeCursor(key: PageKey, identity: string): string {
  return Buffer.from(JSON.stringify({ a: key.at, i: key.id, q: fingerprint(identity) })).toString(
    'base64url',
  );
}

const KEY_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

export type CursorDecision = { ok: true; key: PageKey } | { ok: false; message: string };

/** Reads a cursor given with `identity`'s query; a cursor that is not ours, or was made by
 * another query (other filters, order or observer), is refused. */
export function decodeCursor(cursor: string, identity: string): CursorDecision {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, message: 'not a cursor of this timeline' };
  }
  const c = parsed as { a?: unknown; i?: unknown; q?: unknown } | null;
  if (
    typeof c !== 'object' ||
    c === null ||
    typeof c.a !== 'string' ||
    !KEY_INSTANT.test(c.a) ||
    !Number.isSafeInteger(c.i) ||
    (c.i as number) < 1 ||
    typeof c.q !== 'string'
  )
    return { ok: false, message: 'not a cursor of this timeline' };
  if (c.q !== fingerprint(identity))
    return { ok: false, message: 'the cursor belongs to another query (other filters, order or observer)' };
  return { ok: true, key: { at: c.a, id: c.i as number } };
}
