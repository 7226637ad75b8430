// The Observer page's timeline, as logic: its filters as the unified timeline's query, the
// client-side test a live event must pass to join a filtered view, merging pages and live events
// in order, and the 5D slider's times.
import type { Schemas } from '../api/client';

type Event = Schemas['TimelineEvent'];
export type Order = 'asc' | 'desc';

/** What the person chose: empty strings are "any". `from` and `to` are `datetime-local` values. */
export interface TimelineFilter {
  eventType: string;
  instanceId: string;
  from: string;
  to: string;
  q: string;
  order: Order;
}

export const NO_FILTER: TimelineFilter = {
  eventType: '',
  instanceId: '',
  from: '',
  to: '',
  q: '',
  order: 'desc',
};

/** A `datetime-local` value (local time, no offset) as an ISO instant, or undefined when empty
 * or not a time. */
export function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const t = new Date(value).getTime();
  return Number.isNaN(t) ? undefined : new Date(t).toISOString();
}

/** An ISO instant as a `datetime-local` value in local time (to the second). */
export function isoToLocal(iso: string): string {
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}` +
    `T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

export interface TimelineQuery {
  order: Order;
  limit: number;
  eventType?: string;
  instanceId?: number;
  from?: string;
  to?: string;
  q?: string;
}

/** The query of `GET /api/observer/observer/<id>/timeline` for a filter (no cursor). */
export function toQuery(f: TimelineFilter, limit = 200): TimelineQuery {
  const query: TimelineQuery = { order: f.order, limit };
  if (f.eventType) query.eventType = f.eventType;
  const instanceId = Number(f.instanceId);
  if (f.instanceId && Number.isInteger(instanceId)) query.instanceId = instanceId;
  const from = localToIso(f.from);
  if (from) query.from = from;
  const to = localToIso(f.to);
  if (to) query.to = to;
  const q = f.q.trim();
  if (q) query.q = q;
  return query;
}

/** The words of a text as PostgreSQL's `simple` configuration sees them: lower-case runs of
 * letters and digits. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A search as `websearch_to_tsquery('simple')` reads it, simplified: every word must be there
 * (`or` read as and), a `-word` must not. */
export function searchTerms(q: string): { must: string[]; not: string[] } {
  const must: string[] = [];
  const not: string[] = [];
  for (const token of q.trim().split(/\s+/)) {
    if (!token || token.toLowerCase() === 'or') continue;
    if (token.startsWith('-') && token.length > 1) not.push(...words(token.slice(1)));
    else must.push(...words(token));
  }
  return { must, not };
}

/** Whether a live event belongs in the view of this filter (the server decides for pages; this
 * is its rule for events that arrive on the socket, full text approximated by `searchTerms`). */
export function matchesFilter(e: Event, f: TimelineFilter): boolean {
  const q = toQuery(f);
  if (q.eventType && e.eventType !== q.eventType) return false;
  if (q.instanceId !== undefined && e.instanceId !== q.instanceId) return false;
  const at = Date.parse(e.timelineAt);
  if (q.from && at < Date.parse(q.from)) return false;
  if (q.to && at >= Date.parse(q.to)) return false;
  if (q.q) {
    const have = new Set(words(e.eventText));
    const { must, not } = searchTerms(q.q);
    if (must.length === 0 && not.length === 0) return true;
    if (!must.every((w) => have.has(w)) || not.some((w) => have.has(w))) return false;
  }
  return true;
}

/** Events in (timelineAt, id) order, ascending or descending. */
export function compareEvents(order: Order): (a: Event, b: Event) => number {
  const sign = order === 'asc' ? 1 : -1;
  return (a, b) => sign * (Date.parse(a.timelineAt) - Date.parse(b.timelineAt) || a.id - b.id);
}

/** `a` and `b` as one list in `order`, each event once (the later copy wins). */
export function mergeEvents(a: readonly Event[], b: readonly Event[], order: Order): Event[] {
  if (b.length === 0) return a as Event[];
  const byId = new Map<number, Event>();
  for (const e of a) byId.set(e.id, e);
  for (const e of b) byId.set(e.id, e);
  return [...byId.values()].sort(compareEvents(order));
}

/** The 5D slider's steps: 0 is the first event's time, SLIDER_STEPS the last's. */
export const SLIDER_STEPS = 1000;

/** The time of a slider position over [min, max] (ISO), as the end of its millisecond: the
 * range's times are to the millisecond, the events' to the microsecond, so an event at the
 * slider's time is in the state at it. */
export function sliderTime(min: string, max: string, position: number): string {
  const a = Date.parse(min);
  const b = Date.parse(max);
  const p = Math.max(0, Math.min(SLIDER_STEPS, position));
  const t = Math.round(a + ((b - a) * p) / SLIDER_STEPS);
  return endOfMillisecond(t);
}

/** An instant to the microsecond: the last microsecond of the millisecond `t`. */
export function endOfMillisecond(t: number): string {
  return new Date(t).toISOString().replace(/Z$/, '999Z');
}

/** The summary with one more live event counted (until the next `summary_update` replaces it):
 * the total, the window's (a live event is new) and its type's. */
export function countLive(
  s: Schemas['ObserverSummary'],
  e: Schemas['TimelineEvent'],
): Schemas['ObserverSummary'] {
  const byType = { ...s.events.byType, [e.eventType]: (s.events.byType[e.eventType] ?? 0) + 1 };
  return {
    ...s,
    events: { ...s.events, total: s.events.total + 1, inWindow: s.events.inWindow + 1, byType },
  };
}
