// The one way this module writes its timeline events: in the caller's unit of work, linked to the
// instance's registry instance (else the root observer), metadata naming the instance, machine,
// state and visit; broadcast after commit and, for an instance that names a chat-platform
// channel, handed to the notification port. A write collects its events and records them here in
// one insert when it ends (WorkflowWrite.end). Each instance written is also an item of the unit's
// `instanceWritten` kind, which writes nothing: its flush says which instances the unit wrote to
// those subscribed (the suggestions' pass, startup/writes.ts). The timeline's events do not tell:
// an ingested event may carry the same source and metadata.
import type { Flusher, UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { TimelineEvent, TimelineService } from '../timeline/index.js';
import type { InstanceRow } from './workflows.repository.js';
import type { WorkflowPorts } from './workflows.types.js';

declare module '../../platform/db/unit-of-work.js' {
  interface UnitOfWorkKinds {
    /** A workflow instance's id, once per event of the instance in the unit. */
    instanceWritten: { item: string; result: string };
  }
}

/** The `instanceWritten` kind's flusher: nothing to write, the ids answered as they are. */
export const flushInstancesWritten: Flusher<'instanceWritten'> = async (_uow, ids) => ids;

/** An event of a write, recorded with the others of that write; `row`: the instance as the event
 * names it (its state and visit at the time). */
export interface PendingEvent {
  row: InstanceRow;
  actorId: number | null;
  eventType: string;
  eventText: string;
  metadata?: Record<string, unknown>;
}

export interface EventsTarget {
  uow: UnitOfWork;
  timeline: Pick<TimelineService, 'recordMany'>;
  ports: WorkflowPorts;
}

/** Records the events in one insert (the timeline keeps their order); answers them in the order
 * given. */
export async function recordEvents(to: EventsTarget, events: PendingEvent[]): Promise<TimelineEvent[]> {
  if (events.length === 0) return [];
  const { uow, ports } = to;
  const { notify } = ports;
  for (const id of new Set(events.map((e) => e.row.id))) void uow.add('instanceWritten', id);
  const recorded = await to.timeline.recordMany(
    uow,
    events.map(({ row, actorId, eventType, eventText, metadata }) => ({
      eventType,
      eventText,
      userId: actorId,
      instanceId: row.registry_instance_id,
      source: 'state_machine',
      metadata: {
        stateMachineInstanceId: row.id,
        machineId: row.machine_id,
        state: row.state,
        stateVisit: row.state_visit,
        ...metadata,
      },
    })),
  );
  if (notify)
    for (const [i, event] of recorded.entries()) {
      const { row } = events[i]!;
      const channelId = row.channel_id;
      if (channelId === null) continue;
      uow.afterCommit(() =>
        notify({
          channelId,
          guildId: row.guild_id,
          instanceId: row.id,
          machineId: row.machine_id,
          title: titleOf(row),
          event,
        }),
      );
    }
  return recorded;
}

/** The instance's `context.title`, when it has one. */
export const titleOf = (row: InstanceRow): string | null =>
  typeof row.context.title === 'string' ? row.context.title : null;
