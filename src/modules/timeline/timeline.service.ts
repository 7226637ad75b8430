// The one timeline every module writes to (spec: "Events": every timeline event is enriched with
// instance metadata, given a timeline time, linked to the observer and broadcast).
//
// Callers add the event to the unit of work of the change that causes it (unit-of-work.ts): the
// unit's events are written at its flush in one insert (`flush`, the `timeline` kind's flusher),
// its subscribers (the webhooks: startup/writes.ts) see them in the same transaction, and each is
// published on the bus only once the change committed; the realtime layer (observer module)
// broadcasts it to the observer's room.
import type { Db, Executor } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { EventBus } from '../../platform/events/bus.js';
import { validationFailed } from '../../platform/http/problem.js';
import * as repo from './timeline.repository.js';
import { activityUpdate, observerOf } from './timeline.rules.js';
import type { Instance, InstanceActivity, TimelineEvent } from './timeline.schemas.js';

declare module '../../platform/events/bus.js' {
  interface AppEvents {
    /** A committed timeline event, with the observers whose timelines hold it (`observerChain`);
     * broadcast as `timeline_update` to their rooms. */
    'timeline.recorded': { event: TimelineEvent; observerIds: readonly number[] };
    /** An instance's activity changed, with the observers whose instances include it (its
     * observer's chain); broadcast as `instance_activity` to their rooms. */
    'instance.activity': { observerIds: readonly number[]; activity: InstanceActivity };
    /** An instance was given to another owner (committed): who may watch it is judged again. */
    'instance.owner_changed': { instanceId: number };
  }
}

declare module '../../platform/db/unit-of-work.js' {
  interface UnitOfWorkKinds {
    /** A unit's timeline events: written in one insert at its flush, answered with their ids. */
    timeline: { item: RecordInput; result: TimelineEvent };
  }
}

export interface RecordInput {
  eventType: string;
  eventText?: string | undefined;
  /** The player (or character) the event is about. */
  userId?: number | null | undefined;
  /** The registry instance the event concerns; unknown → 400 validation_failed. Absent: the
   * event belongs to the root observer. */
  instanceId?: number | null | undefined;
  /** Defaults to the instance's persona. */
  personaId?: number | null | undefined;
  /** Defaults to the instance's source, else "system". */
  source?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  /** When it happened, if not now. */
  occurredAt?: Date | undefined;
}

export function toEvent(r: repo.EventRow): TimelineEvent {
  return {
    id: r.id,
    userId: r.user_id,
    eventType: r.event_type,
    eventText: r.event_text,
    source: r.source,
    instanceId: r.instance_id,
    observerId: r.observer_id,
    personaId: r.persona_id === null ? null : Number(r.persona_id),
    metadata: r.metadata,
    occurredAt: new Date(r.occurred_at).toISOString(),
    timelineAt: r.timeline_at.toISOString(),
  };
}

export function toInstance(r: repo.InstanceRow): Instance {
  return {
    id: r.id,
    name: r.name,
    level: Number(r.level) as 5 | 8,
    personaId: r.persona_id,
    source: r.source,
    parentInstanceId: r.parent_instance_id,
    stateMachineInstanceId: r.state_machine_instance_id,
    channelId: r.channel_id,
    userId: r.user_id,
    isActive: r.is_active,
    lastSeenAt: r.last_seen_at?.toISOString() ?? null,
    metadata: r.metadata,
    isRoot: r.is_root,
    createdAt: r.created_at.toISOString(),
  };
}

/** Observer chains kept per node at most; past it the oldest is dropped (and read again if used). */
const CHAINS_KEPT = 10_000;

export class TimelineService {
  private rootId: number | undefined;
  /** `observerChain`'s answers by observer id. An observer's place never changes: its parent is
   * set when it is registered (the registry's patch has no parent), instances are never deleted
   * and ids never reused, so a chain read once holds on every node for the life of the process
   * and nothing needs to invalidate it; a new observer is a miss, read once. A chain read in a
   * transaction that then rolls back names ids no event will ever carry: harmless. */
  private readonly chains = new Map<number, readonly number[]>();

  constructor(
    private readonly db: Db,
    private readonly bus: EventBus,
    /** Who owns the root observer: the first CSO (the users module's answer). */
    private readonly users: { firstCsoId(executor?: Executor): Promise<number | undefined> },
  ) {}

  /** Creates the root observer unless it exists, and gives it an owner (the first CSO) when it has
   * none. Idempotent; safe when several nodes start together. */
  async ensureRootObserver(executor: Executor = this.db): Promise<number> {
    await repo.insertRootIfMissing(executor, 'Observer');
    const csoId = await this.users.firstCsoId(executor);
    if (csoId !== undefined) await repo.adoptRootOwner(executor, csoId);
    const root = await repo.findRoot(executor);
    this.rootId = root!.id;
    return root!.id;
  }

  /** The root observer's id (created on first use if a test or CLI skipped the startup step). */
  async rootObserverId(executor: Executor = this.db): Promise<number> {
    if (this.rootId !== undefined) return this.rootId;
    const root = await repo.findRoot(executor);
    if (root) return (this.rootId = root.id);
    return this.ensureRootObserver(executor);
  }

  /** The observers whose timelines hold an event of `observerId` (contract: "Observer": an
   * observer's timeline holds the events of the observers below it at any depth, the root's every
   * event): the observer itself, each observer above it nearest first, and the root last. Read
   * from the node's cache (see `chains`), else with one statement for all the ids missing. */
  async observerChains(
    observerIds: readonly number[],
    executor: Executor = this.db,
  ): Promise<Map<number, readonly number[]>> {
    const missing = [...new Set(observerIds.filter((id) => !this.chains.has(id)))];
    if (missing.length > 0) {
      const rootId = await this.rootObserverId(executor);
      const above = new Map<number, number[]>(missing.map((id) => [id, []]));
      for (const r of (await repo.observersAbove(executor, missing)).rows)
        above.get(Number(r.origin))?.push(Number(r.id));
      for (const [id, ids] of above) {
        // An id with no row (an event written by hand) still reaches its own room and the root's.
        const chain = ids.length === 0 ? [id] : ids;
        if (!chain.includes(rootId)) chain.push(rootId);
        if (this.chains.size >= CHAINS_KEPT) this.chains.delete(this.chains.keys().next().value!);
        this.chains.set(id, chain);
      }
    }
    return new Map(observerIds.map((id) => [id, this.chains.get(id)!]));
  }

  /** One observer's chain (see `observerChains`). */
  async observerChain(observerId: number, executor: Executor = this.db): Promise<readonly number[]> {
    return (await this.observerChains([observerId], executor)).get(observerId)!;
  }

  /**
   * Adds one timeline event to the caller's unit of work, written at its flush (awaiting the
   * answer flushes now) and broadcast after commit.
   * Enrichment: the instance's level, source, name and persona go into `metadata.instance`;
   * `observerId` is the instance's observer (Level-8 parent) or the root observer;
   * `timelineAt` is the server's clock at recording. Touches the instance's `lastSeenAt`.
   */
  record(uow: UnitOfWork, input: RecordInput) {
    return uow.add('timeline', input);
  }

  /** Several events of one change, as `record` adds each; answered once written. */
  recordMany(uow: UnitOfWork, inputs: readonly RecordInput[]): Promise<TimelineEvent[]> {
    return Promise.all(inputs.map((input) => uow.add('timeline', input)));
  }

  /** The `timeline` kind's flusher (startup/writes.ts): the events a flush holds, as `record` describes each,
   * in one insert: they get ascending ids in the order added, each instance is touched (and its
   * activity announced) once, the touched instances' rows locked in ascending id order (see
   * `repo.touchInstances`), and they are broadcast in that order after commit. An unknown
   * instance is 400 `validation_failed`, and the unit rolls back. */
  async flush(uow: UnitOfWork, inputs: readonly RecordInput[]): Promise<TimelineEvent[]> {
    const { trx } = uow;
    if (inputs.length === 0) return [];
    // The instances of the events, read in one statement.
    const ids = [...new Set(inputs.map((input) => input.instanceId ?? null).filter((id) => id !== null))];
    const found = ids.length === 0 ? [] : await repo.findInstances(trx, ids);
    const instances = new Map(found.map((r) => [r.id, r]));
    for (const input of inputs) {
      const instanceId = input.instanceId ?? null;
      if (instanceId === null || instances.has(instanceId)) continue;
      const path = input.metadata?.instanceId === instanceId ? 'metadata.instanceId' : 'instanceId';
      throw validationFailed([{ path, message: `no instance ${instanceId}` }]);
    }
    const rootId = await this.rootObserverId(trx);
    const rows = await repo.insertEvents(
      trx,
      inputs.map((input) => {
        const instanceId = input.instanceId ?? null;
        const instance = instanceId === null ? null : instances.get(instanceId)!;
        const observerId = observerOf(
          instance
            ? {
                id: instance.id,
                level: Number(instance.level) as 5 | 8,
                parent_instance_id: instance.parent_instance_id,
              }
            : null,
          rootId,
        );
        const metadata: Record<string, unknown> = { ...input.metadata };
        if (instance) {
          // spec: "Every timeline event is enriched with instance metadata".
          metadata.instance = {
            id: instance.id,
            name: instance.name,
            level: Number(instance.level),
            source: instance.source,
            personaId: instance.persona_id,
          };
        }
        return {
          userId: input.userId ?? null,
          eventType: input.eventType,
          eventText: input.eventText ?? '',
          source: input.source ?? instance?.source ?? 'system',
          instanceId,
          observerId,
          personaId: input.personaId ?? instance?.persona_id ?? null,
          metadata,
          occurredAt: input.occurredAt ?? null,
        };
      }),
    );
    const events = rows.map(toEvent);
    // Read in the transaction: a new observer registered by it is already there.
    const chains = await this.observerChains(
      events.map((e) => e.observerId),
      trx,
    );
    // The first event of each instance touches it (a later one of the same change would find it
    // just seen).
    const touches: { id: number; at: Date }[] = [];
    const seen = new Set<number>();
    for (const [i, row] of rows.entries()) {
      const instance = row.instance_id === null ? undefined : instances.get(row.instance_id);
      if (!instance || seen.has(instance.id)) continue;
      seen.add(instance.id);
      const now = row.timeline_at;
      const { touch, announce } = activityUpdate(instance.last_seen_at, now);
      if (touch) touches.push({ id: instance.id, at: now });
      if (announce) {
        const observerIds = chains.get(events[i]!.observerId)!;
        const activity = {
          instanceId: instance.id,
          isActive: instance.is_active,
          lastSeenAt: now.toISOString(),
        };
        uow.afterCommit(() => this.bus.publish('instance.activity', { observerIds, activity }));
      }
    }
    // Sent, not waited for: the subscribers' statements go out behind it.
    if (touches.length > 0) void uow.send(repo.touchInstances(trx, touches));
    for (const event of events)
      uow.afterCommit(() =>
        this.bus.publish('timeline.recorded', { event, observerIds: chains.get(event.observerId)! }),
      );
    return events;
  }

  /** Announces an instance's changed activity (e.g. an admin switched it on or off) to its
   * observer and those above it. */
  async announceActivity(instance: Instance, uow: UnitOfWork) {
    const observerIds = await this.observerChain(await this.observerIdOf(instance, uow.trx), uow.trx);
    const activity = {
      instanceId: instance.id,
      isActive: instance.isActive,
      lastSeenAt: instance.lastSeenAt,
    };
    uow.afterCommit(() => this.bus.publish('instance.activity', { observerIds, activity }));
  }

  /** Says, once committed, that an instance has a new owner (`instance.owner_changed`). */
  announceOwnerChange(instanceId: number, uow: UnitOfWork) {
    uow.afterCommit(() => this.bus.publish('instance.owner_changed', { instanceId }));
  }

  /** Newest events first: of one player, of one observer, or of one type. */
  async list(
    f: { userId?: number; observerId?: number; eventType?: string; limit: number },
    executor: Executor = this.db,
  ): Promise<TimelineEvent[]> {
    return (await repo.listEvents(executor, f)).map(toEvent);
  }

  /** Newest first: the events of state-machine instances (their `metadata.stateMachineInstanceId`),
   * of one type when given. */
  async listForStateMachines(
    f: { stateMachineInstanceIds: string[]; eventType?: string | undefined; limit?: number | undefined },
    executor: Executor = this.db,
  ): Promise<TimelineEvent[]> {
    if (f.stateMachineInstanceIds.length === 0) return [];
    return (await repo.listStateMachineEvents(executor, f)).map(toEvent);
  }

  /** Links a registry instance to the state-machine instance it runs (the spec's
   * `stateMachineInstanceId`), in the caller's transaction. */
  async linkStateMachine(
    executor: Executor,
    instanceId: number,
    stateMachineInstanceId: string,
  ): Promise<void> {
    await repo.updateInstance(executor, instanceId, { state_machine_instance_id: stateMachineInstanceId });
  }

  /** The id of the player's own instance (the active level-5 one it owns), or null when none. */
  async playerInstanceId(executor: Executor, userId: number): Promise<number | null> {
    return (await repo.findPlayerInstance(executor, userId))?.id ?? null;
  }

  async getInstance(id: number, executor: Executor = this.db): Promise<Instance | undefined> {
    const r = await repo.findInstance(executor, id);
    return r ? toInstance(r) : undefined;
  }

  /** The observer an instance reports to (itself for a Level-8 instance). */
  async observerIdOf(instance: Instance, executor: Executor = this.db): Promise<number> {
    return observerOf(
      { id: instance.id, level: instance.level, parent_instance_id: instance.parentInstanceId },
      await this.rootObserverId(executor),
    );
  }

  /** For the admin statistics: timeline events in all, and in the last `hours`. */
  async stats(hours: number): Promise<{ total: number; recent: number }> {
    const r = await repo.countEvents(this.db, hours);
    return { total: Number(r.total), recent: Number(r.recent) };
  }
}
