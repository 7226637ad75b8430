// An observer's unified timeline (contract: "Observer"): the events of the observer and of the
// instances and observers below it, in pages both ways, filtered, searched, exported through a
// database cursor; the figures of its instances and events now, and as they were at a time (the
// past of an instance's activity is its `instance_activity_changed` events). The caller (the
// observer module) has already decided that the observer exists and may be read.
import type { Db } from '../../platform/db/database.js';
import type { OpenCursor, RowCursor } from '../../platform/db/cursor.js';
import { validationFailed } from '../../platform/http/problem.js';
import type { Instance, TimelineEvent } from './timeline.schemas.js';
import { toEvent, toInstance, type TimelineService } from './timeline.service.js';
import * as repo from './unified.repository.js';
import {
  decodeCursor,
  encodeCursor,
  queryIdentity,
  type PageKey,
  type TimelineFilter,
  type TimelineOrder,
} from './unified.rules.js';

/** Counts keyed by value (`"none"` for null). */
export type Counts = Record<string, number>;

export interface TimelinePage {
  events: TimelineEvent[];
  nextCursor: string | null;
}

export interface TimelineExport {
  /** More events matched than the export holds. */
  truncated: boolean;
  /** The events in order, in batches; close it when the reader stops early. */
  events: RowCursor<TimelineEvent>;
}

export interface ObserverFigures {
  instances: {
    total: number;
    active: number;
    inactive: number;
    byLevel: Counts;
    bySource: Counts;
    byPersona: Counts;
  };
  events: {
    total: number;
    inWindow: number;
    bySource: Counts;
    byType: Counts;
    byLevel: Counts;
    byPersona: Counts;
  };
  diaryCompliance: { compliant: boolean; missingCount: number; windowHours: number };
}

export interface UnifiedTimelineOptions {
  /** Rows per FETCH of an export's cursor. */
  exportBatch: number;
}

const key = (v: string | number | null) => (v === null ? 'none' : String(v));

function tally<T>(
  rows: T[],
  by: (r: T) => string | number | null,
  weight: (r: T) => number = () => 1,
): Counts {
  const out: Counts = {};
  for (const r of rows) {
    const k = key(by(r));
    out[k] = (out[k] ?? 0) + weight(r);
  }
  return out;
}

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

export class UnifiedTimeline {
  constructor(
    private readonly db: Db,
    private readonly openCursor: OpenCursor,
    private readonly timeline: Pick<TimelineService, 'rootObserverId'>,
    private readonly opts: UnifiedTimelineOptions,
  ) {}

  private async isRoot(observerId: number): Promise<boolean> {
    return observerId === (await this.timeline.rootObserverId());
  }

  /** Whose events an observer's timeline holds: every event for the root; else its own and its
   * observers' below it (an event's `observerId` is always an observer). */
  private async scope(observerId: number): Promise<repo.EventScope> {
    if (await this.isRoot(observerId)) return { all: true };
    const below = await repo.observersBelow(this.db, observerId);
    return { all: false, observerIds: [observerId, ...below.rows.map((r) => Number(r.id))] };
  }

  /** The users among `userIds` its instances concern (whom its owner may see named): those who own
   * it or one of its instances, and those its timeline's events name. The root concerns everyone
   * (every instance and every event is under it). In `userIds` order. */
  async concerned(observerId: number, userIds: readonly number[]): Promise<number[]> {
    if (userIds.length === 0) return [];
    const scope = await this.scope(observerId);
    if (scope.all) return [...userIds];
    const found = new Set(await repo.usersConcerned(this.db, observerId, scope.observerIds, userIds));
    return userIds.filter((id) => found.has(id));
  }

  private async instances(observerId: number) {
    return repo.instancesBelow(this.db, observerId, await this.isRoot(observerId));
  }

  /** A page after the cursor's place; `nextCursor` is null at the end. A cursor of another query
   * (observer, filters, order) or not ours at all is 400 on `querystring.cursor`. */
  async page(
    observerId: number,
    filter: TimelineFilter,
    p: { order: TimelineOrder; limit: number; cursor?: string | undefined },
  ): Promise<TimelinePage> {
    const identity = queryIdentity(observerId, filter, p.order);
    let after: PageKey | undefined;
    if (p.cursor !== undefined) {
      const decided = decodeCursor(p.cursor, identity);
      if (!decided.ok) throw validationFailed([{ path: 'querystring.cursor', message: decided.message }]);
      after = decided.key;
    }
    const rows = await repo.eventPage(this.db, await this.scope(observerId), filter, { ...p, after });
    const page = rows.slice(0, p.limit);
    const last = page.at(-1);
    return {
      events: page.map(toEvent),
      nextCursor:
        rows.length > p.limit && last ? encodeCursor({ at: last.page_key, id: last.id }, identity) : null,
    };
  }

  /** A numbered page with the total of the filtered timeline. */
  async numberedPage(
    observerId: number,
    filter: TimelineFilter,
    p: { order: TimelineOrder; page: number; pageSize: number },
  ): Promise<{ events: TimelineEvent[]; total: number }> {
    const scope = await this.scope(observerId);
    const [rows, total] = await Promise.all([
      repo.eventOffsetPage(this.db, scope, filter, {
        order: p.order,
        limit: p.pageSize,
        offset: (p.page - 1) * p.pageSize,
      }),
      repo.countMatching(this.db, scope, filter),
    ]);
    return { events: rows.map(toEvent), total };
  }

  /** The first `max` events of the filtered timeline in order, read through a database cursor
   * (one batch at a time, as the reader asks), and whether more matched (asked in the cursor's
   * snapshot). */
  async export(
    observerId: number,
    filter: TimelineFilter,
    order: TimelineOrder,
    max: number,
  ): Promise<TimelineExport> {
    const scope = await this.scope(observerId);
    const { cursor, probe } = await this.openCursor(
      repo.exportQuery(this.db, scope, filter, order, max).compile(),
      { batch: this.opts.exportBatch, probe: repo.beyondQuery(this.db, scope, filter, max).compile() },
    );
    return {
      truncated: probe.length > 0,
      events: {
        next: async () => (await cursor.next()).map(toEvent),
        close: () => cursor.close(),
      },
    };
  }

  /** The newest `limit` events of the last `hours` but those of `excludeType`, oldest first. */
  async recent(
    observerId: number,
    p: { hours: number; limit: number; excludeType: string },
  ): Promise<TimelineEvent[]> {
    const rows = await repo.recentEvents(this.db, await this.scope(observerId), {
      since: hoursAgo(p.hours),
      excludeType: p.excludeType,
      limit: p.limit,
    });
    return rows.reverse().map(toEvent);
  }

  /** The summary's figures (contract: "Observer", summary): its instances now, its events in all
   * and in the last `hours` (the `by*` counts are the window's), and diary compliance over its
   * active Level-5 instances (each needs a `diary_entry` event in the window). */
  async figures(observerId: number, hours: number): Promise<ObserverFigures> {
    const since = hoursAgo(hours);
    const [instances, scope] = await Promise.all([this.instances(observerId), this.scope(observerId)]);
    const active = instances.filter((i) => i.is_active);
    const diaryDue = active.filter((i) => Number(i.level) === 5).map((i) => i.id);
    const [all, window, missingCount] = await Promise.all([
      repo.extent(this.db, scope),
      repo.windowBreakdown(this.db, scope, since),
      repo.withoutDiary(this.db, diaryDue, since),
    ]);
    const n = (r: { n: number }) => Number(r.n);
    return {
      instances: {
        total: instances.length,
        active: active.length,
        inactive: instances.length - active.length,
        byLevel: tally(instances, (i) => Number(i.level)),
        bySource: tally(instances, (i) => i.source),
        byPersona: tally(instances, (i) => i.persona_id),
      },
      events: {
        total: all.count,
        inWindow: window.reduce((s, r) => s + n(r), 0),
        bySource: tally(window, (r) => r.source, n),
        byType: tally(window, (r) => r.event_type, n),
        byLevel: tally(window, (r) => r.level, n),
        byPersona: tally(window, (r) => r.persona_id, n),
      },
      diaryCompliance: { compliant: missingCount === 0, missingCount, windowHours: hours },
    };
  }

  /** Diary status of an observer's instances (contract: "Ground floor and subject
   * consciousness", compliance): its Level-5 instances, each with its `diary_entry` events of the
   * last `hours` and the last one's time. */
  async diaryStatus(
    observerId: number,
    hours: number,
  ): Promise<{ instance: Instance; entries: number; lastDiaryAt: string | null }[]> {
    const level5 = (await this.instances(observerId)).filter((i) => Number(i.level) === 5);
    const entries = new Map(
      (
        await repo.diaryEntries(
          this.db,
          level5.map((i) => i.id),
          hoursAgo(hours),
        )
      ).map((e) => [Number(e.instance_id), e]),
    );
    return level5.map((r) => {
      const e = entries.get(r.id);
      return {
        instance: toInstance(r),
        entries: e ? Number(e.entries) : 0,
        lastDiaryAt: e ? new Date(e.last_at).toISOString() : null,
      };
    });
  }

  /** Its instances now (the registry's view). */
  async instancesOf(observerId: number): Promise<Instance[]> {
    return (await this.instances(observerId)).map(toInstance);
  }

  /** How many distinct instances have events in its timeline in the last `hours`. */
  async activeInstances(observerId: number, hours: number): Promise<number> {
    return repo.activeInstancesSince(this.db, await this.scope(observerId), hoursAgo(hours));
  }

  /** What an observer is aware of now: its instances, the active ones, its events of the last
   * `hours`. */
  async awareness(
    observerId: number,
    hours: number,
  ): Promise<{ instances: number; activeInstances: number; eventsInWindow: number }> {
    const [instances, scope] = await Promise.all([this.instances(observerId), this.scope(observerId)]);
    const inWindow = await repo.countMatching(this.db, scope, { from: hoursAgo(hours) });
    return {
      instances: instances.length,
      activeInstances: instances.filter((i) => i.is_active).length,
      eventsInWindow: inWindow,
    };
  }

  /** Its instances as they were at `at` (ISO 8601): those created by then, each `isActive` as its
   * last activity change up to `at` left it (true when it never changed), `lastSeenAt` only when
   * it is not later than `at`. */
  async instancesAt(observerId: number, at: string): Promise<Instance[]> {
    const rows = await repo.instancesAsOf(this.db, observerId, { root: await this.isRoot(observerId), at });
    const atMs = new Date(at).getTime();
    return rows.map((r) => {
      const instance = toInstance(r);
      instance.isActive = r.active_then;
      if (r.last_seen_at && r.last_seen_at.getTime() > atMs) instance.lastSeenAt = null;
      return instance;
    });
  }

  /** The state at `at`: its instances then (`instancesAt`), and its newest `limit` events up to
   * `at` (inclusive) with how many there were by then. */
  async stateAt(
    observerId: number,
    at: string,
    limit: number,
  ): Promise<{ instances: Instance[]; events: TimelineEvent[]; eventCount: number }> {
    const [instances, { events, eventCount }] = await Promise.all([
      this.instancesAt(observerId, at),
      this.scope(observerId).then(async (scope) => {
        const [rows, extent] = await Promise.all([
          repo.eventsUpTo(this.db, scope, at, limit),
          repo.extent(this.db, scope, at),
        ]);
        return { events: rows.map(toEvent), eventCount: extent.count };
      }),
    ]);
    return { instances, events, eventCount };
  }

  /** Its timeline up to `at`: how many events, the first and last time, by type. */
  async timelineAt(
    observerId: number,
    at: string,
  ): Promise<{ eventCount: number; firstAt: string | null; lastAt: string | null; byType: Counts }> {
    const scope = await this.scope(observerId);
    const [extent, types] = await Promise.all([
      repo.extent(this.db, scope, at),
      repo.typesUpTo(this.db, scope, at),
    ]);
    return {
      eventCount: extent.count,
      firstAt: extent.first?.toISOString() ?? null,
      lastAt: extent.last?.toISOString() ?? null,
      byType: tally(
        types,
        (t) => t.event_type,
        (t) => Number(t.n),
      ),
    };
  }

  /** The first and last `timelineAt` of its timeline (null when empty), and its size. */
  async range(observerId: number): Promise<{ min: string | null; max: string | null; eventCount: number }> {
    const extent = await repo.extent(this.db, await this.scope(observerId));
    return {
      min: extent.first?.toISOString() ?? null,
      max: extent.last?.toISOString() ?? null,
      eventCount: extent.count,
    };
  }
}
