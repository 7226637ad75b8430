// The observer (contract: "Observer"): its unified timeline (pages, numbered pages, exports), its
// summary and meta-state, and 5D navigation (its state at a time, its awareness reconstructed,
// its range). Reflections and the cycle are observer.reflection.ts. Who may call: a CSO, an admin
// or the observer's owner (403 otherwise, unknown ids too; 404 for an allowed caller naming no
// observer), the same rule as joining its `/observer` room. What the answers name is the caller's
// view: a CSO or an admin sees every user; an owner sees, on an observer below the root, only the
// users its instances concern and their balances (`visible`).
import type { Db } from '../../platform/db/database.js';
import type { EventBus } from '../../platform/events/bus.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { InventoryService } from '../inventory/index.js';
import type { MemoryService } from '../memory/index.js';
import type {
  Instance,
  InstancesService,
  TimelineExport,
  TimelineFilter,
  TimelinePage,
  UnifiedTimeline,
} from '../timeline/index.js';
import * as repo from './observer.repository.js';
import type { MetaState, ObserverSummary, PaginatedQuery, TimelineQuery } from './observer.schemas.js';
import type { Awareness } from './observer.tables.js';

declare module '../../platform/events/bus.js' {
  interface AppEvents {
    /** An observer's summary after its cycle; sent as `summary_update` to its room. */
    'observer.summary': { observerId: number; summary: ObserverSummary };
  }
}

/** The most events one export holds (contract: "Observer"). */
export const EXPORT_MAX = 10_000;

export interface ObserverServiceDeps {
  db: Db;
  bus: EventBus;
  unified: UnifiedTimeline;
  instances: Pick<InstancesService, 'authorizeWatcher' | 'observers'>;
  memory: Pick<MemoryService, 'aboutObserver' | 'ownersAboutObserver'>;
  inventory: Pick<InventoryService, 'stateAt'>;
  /** The assistant's own user: an observer's reflections and encodings are its memories. */
  assistantUserId: () => Promise<number>;
}

/** The filters of a timeline request. */
export function filterOf(q: TimelineQuery | PaginatedQuery): TimelineFilter {
  const list = <T>(v: T[] | undefined) => (v && v.length > 0 ? v : undefined);
  return {
    eventTypes: list(q.eventType),
    sources: list(q.source),
    personaIds: list(q.personaId),
    instanceId: q.instanceId,
    userId: q.userId,
    q: q.q,
    from: q.from,
    to: q.to,
  };
}

export function toMetaState(row: repo.MetaStateRow | undefined, current: Awareness): MetaState {
  return {
    cycles: row?.cycles ?? 0,
    lastCycleAt: row?.last_cycle_at?.toISOString() ?? null,
    lastCycleOutcome: row?.last_cycle_outcome ?? null,
    lastReflectionId: row?.last_reflection_id ?? null,
    lastReflectionAt: row?.last_reflection_at?.toISOString() ?? null,
    awareness: row?.awareness ?? current,
  };
}

/** A 5D time: a future one is now. Kept as given otherwise (its microseconds count). */
function notAfterNow(at: string): string {
  return Date.parse(at) > Date.now() ? new Date().toISOString() : at;
}

export class ObserverService {
  constructor(private readonly d: ObserverServiceDeps) {}

  /** The observer, when the caller may read it. */
  access(user: UserPrincipal, observerId: number): Promise<Instance> {
    return this.d.instances.authorizeWatcher(user, observerId);
  }

  /** Whether the caller may see every user named in the observer's answers: a CSO or an admin,
   * and anyone on the root (every user is under it). Else it is its owner's view: only the users
   * its instances concern (its instances' owners, the users its timeline's events name). */
  private seesEveryone(user: UserPrincipal, observer: Instance): boolean {
    return user.role === 'cso' || user.admin || observer.isRoot;
  }

  /** The users among `userIds` the caller may see named in the observer's answers. */
  private async visible(user: UserPrincipal, observer: Instance, userIds: number[]): Promise<number[]> {
    if (this.seesEveryone(user, observer)) return userIds;
    return this.d.unified.concerned(observer.id, userIds);
  }

  /** Whose memories about the observer up to `at` the caller may see (undefined: everyone's): the
   * assistant's (the observer's own reflections and encodings) and those of the users it may see.
   * Any user may write a memory whose metadata names an observer. */
  private async memoryOwners(user: UserPrincipal, observer: Instance, at: string) {
    if (this.seesEveryone(user, observer)) return undefined;
    const owners = await this.d.memory.ownersAboutObserver({ observerId: observer.id, upTo: at });
    const assistantId = await this.d.assistantUserId();
    return [assistantId, ...(await this.d.unified.concerned(observer.id, owners))];
  }

  /** The observers the caller may read, by id: every one for a CSO or an admin (the test of
   * `access`), else those the caller owns (none is an empty list, not a refusal). */
  observers(user: UserPrincipal): Promise<Instance[]> {
    const everyOne = user.role === 'cso' || user.admin;
    return this.d.instances.observers(everyOne ? undefined : user.id);
  }

  async timeline(user: UserPrincipal, observerId: number, q: TimelineQuery): Promise<TimelinePage> {
    await this.access(user, observerId);
    return this.d.unified.page(observerId, filterOf(q), { order: q.order, limit: q.limit, cursor: q.cursor });
  }

  async paginated(user: UserPrincipal, observerId: number, q: PaginatedQuery) {
    await this.access(user, observerId);
    const { events, total } = await this.d.unified.numberedPage(observerId, filterOf(q), {
      order: q.order,
      page: q.page,
      pageSize: q.pageSize,
    });
    return { events, page: q.page, pageSize: q.pageSize, total, totalPages: Math.ceil(total / q.pageSize) };
  }

  /** The whole filtered timeline in order, at most EXPORT_MAX events, read through a database
   * cursor as the caller reads on: close `events` when stopping early. */
  async export(
    user: UserPrincipal,
    observerId: number,
    q: TimelineQuery,
  ): Promise<TimelineExport & { observerId: number; exportedAt: string }> {
    await this.access(user, observerId);
    const exportedAt = new Date().toISOString();
    const out = await this.d.unified.export(observerId, filterOf(q), q.order, EXPORT_MAX);
    return { ...out, observerId, exportedAt };
  }

  /** The summary (contract: "Observer"), also the `summary_update` payload. */
  async summary(user: UserPrincipal, observerId: number, hours: number): Promise<ObserverSummary> {
    await this.access(user, observerId);
    return this.summaryOf(observerId, hours);
  }

  /** The summary of an observer the caller may read. */
  async summaryOf(observerId: number, hours: number, metaState?: MetaState): Promise<ObserverSummary> {
    const generatedAt = new Date().toISOString();
    const [figures, row] = await Promise.all([
      this.d.unified.figures(observerId, hours),
      metaState ? undefined : repo.findMetaState(this.d.db, observerId),
    ]);
    return {
      observerId,
      generatedAt,
      windowHours: hours,
      ...figures,
      metaState:
        metaState ??
        toMetaState(row, {
          instances: figures.instances.total,
          activeInstances: figures.instances.active,
          eventsInWindow: figures.events.inWindow,
        }),
    };
  }

  /** Announces an observer's summary to its room (`summary_update`). */
  publishSummary(summary: ObserverSummary): void {
    this.d.bus.publish('observer.summary', { observerId: summary.observerId, summary });
  }

  /** 5D: the observer's state at `at`: its instances as they were, their owners' (and `userId`'s)
   * balances and items rebuilt from the economy ledger, its newest events up to then. */
  async stateAt(
    user: UserPrincipal,
    observerId: number,
    q: { at: string; events: number; userId?: number | undefined },
  ) {
    const observer = await this.access(user, observerId);
    const at = notAfterNow(q.at);
    const then = await this.d.unified.stateAt(observerId, at, q.events);
    // A `userId` the caller may not see is left out of `users`, not refused: the state asked for
    // is the observer's, which the caller may read. A user who does not exist is left out the
    // same way, so the answer tells neither apart (no oracle, as with the 403 for any observer).
    const asked = q.userId === undefined ? [] : await this.visible(user, observer, [q.userId]);
    const userIds = [
      ...new Set([...then.instances.flatMap((i) => (i.userId === null ? [] : [i.userId])), ...asked]),
    ];
    const users = await this.d.inventory.stateAt(userIds, at);
    const { instances, events, eventCount } = then;
    return { observerId, at: new Date(at).toISOString(), instances, users, events, eventCount };
  }

  /** 5D: its awareness reconstructed at `at`: the last reflection by then, the memories about it,
   * its timeline's figures and its instances, all as of `at`; memories of whom the caller may see. */
  async reconstruct(user: UserPrincipal, observerId: number, q: { at: string; limit: number }) {
    const observer = await this.access(user, observerId);
    const at = notAfterNow(q.at);
    const ownerIds = await this.memoryOwners(user, observer, at);
    const [reflections, memories, timeline, instances] = await Promise.all([
      this.d.memory.aboutObserver({
        observerId,
        upTo: at,
        limit: 1,
        source: 'observer_reflection',
        ownerIds,
      }),
      this.d.memory.aboutObserver({ observerId, upTo: at, limit: q.limit, ownerIds }),
      this.d.unified.timelineAt(observerId, at),
      this.d.unified.instancesAt(observerId, at),
    ]);
    const last = reflections[0];
    return {
      observerId,
      at: new Date(at).toISOString(),
      lastReflection: last ? { memoryId: last.id, text: last.content, createdAt: last.createdAt } : null,
      memories: memories.map((m) => ({
        id: m.id,
        userId: m.userId,
        content: m.content,
        source: m.source,
        metadata: m.metadata,
        createdAt: m.createdAt,
      })),
      timeline,
      instances: { total: instances.length, active: instances.filter((i) => i.isActive).length },
    };
  }

  /** 5D: the first and last times of its timeline. */
  async range(user: UserPrincipal, observerId: number) {
    await this.access(user, observerId);
    return { observerId, ...(await this.d.unified.range(observerId)) };
  }
}
