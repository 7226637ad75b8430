// The one way this module writes its timeline events: in the caller's transaction, linked to the
// instance's registry instance (else the root observer), metadata naming the instance, machine,
// state and visit; broadcast after commit and, for an instance that names a chat-platform
// channel, handed to the notification port. A write collects its events and records them here in
// one insert when it ends (WorkflowWrite.end).
import { together, type Executor } from '../../platform/db/database.js';
import type { AfterCommit, TimelineEvent, TimelineService } from '../timeline/index.js';
import type { InstanceRow } from './workflows.repository.js';
import type { WorkflowPorts } from './workflows.types.js';

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
  trx: Executor;
  afterCommit: AfterCommit;
  timeline: Pick<TimelineService, 'recordMany'>;
  ports: WorkflowPorts;
}

/** Records the events in one insert (the timeline keeps their order), with the `instanceWritten`
 * job of each instance they name; answers them in the order given. */
export async function recordEvents(to: EventsTarget, events: PendingEvent[]): Promise<TimelineEvent[]> {
  if (events.length === 0) return [];
  const { trx, afterCommit, ports } = to;
  const { instanceWritten, notify } = ports;
  // The jobs and the events are independent statements: made together.
  const jobs = instanceWritten
    ? [...new Set(events.map((e) => e.row.id))].map((id) => instanceWritten(trx, id))
    : [];
  const recording = to.timeline.recordMany(
    trx,
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
    afterCommit,
  );
  const [recorded] = await together([recording, together(jobs)]);
  if (notify)
    for (const [i, event] of recorded.entries()) {
      const { row } = events[i]!;
      const channelId = row.channel_id;
      if (channelId === null) continue;
      afterCommit(() =>
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
