// A workflow instance's state entries (contract "Workflows"): the transition event, the entry
// checklist, the state's actions (announceExecutionStart, collectArtifacts), completion (archived,
// the active run canceled), and the one way this module writes its timeline events: in the
// caller's transaction, linked to the instance's registry instance (else the root observer),
// broadcast after commit and handed to the chat-platform notification port.
import { randomUUID } from 'node:crypto';
import { together, type Executor, type Trx } from '../../platform/db/database.js';
import { AppError } from '../../platform/http/problem.js';
import type { AfterCommit, TimelineEvent } from '../timeline/index.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import { stateOf } from './workflows.rules.js';
import type { RunTrigger } from './workflows.tables.js';
import type { WorkflowActor, WorkflowPorts, WorkflowsDeps } from './workflows.types.js';

/** What a state's entry actions read (WorkflowEntry.entryReads); a part the state's actions do
 * not need is left empty (no artifacts, no active run, no run to start). */
export interface EntryReads {
  artifacts: repo.ArtifactListRow[];
  active: runs.RunRow | undefined;
  mayStart: boolean;
}

/** A state's entry as `move` starts it: the state's update, made and not yet answered (the
 * instance as it leaves it), and what the entry's actions read. */
export interface Entering {
  written: Promise<repo.InstanceRow>;
  reads: EntryReads;
}

const NO_READS: EntryReads = Object.freeze({ artifacts: [], active: undefined, mayStart: false });

/** An event of a write, recorded with the others of that write (WorkflowEntry.recordAll). */
export interface PendingEvent {
  row: repo.InstanceRow;
  actorId: number | null;
  eventType: string;
  eventText: string;
  metadata?: Record<string, unknown>;
}

export class WorkflowEntry {
  constructor(
    private readonly deps: WorkflowsDeps,
    private readonly ports: () => WorkflowPorts,
  ) {}

  /** One `workflow_*` event of an instance: linked to its registry instance (else the root
   * observer), metadata naming the instance, machine, state and visit; after commit, handed to the
   * notification port when the instance names a channel. */
  async record(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actorId: number | null,
    eventType: string,
    eventText: string,
    metadata: Record<string, unknown> = {},
  ): Promise<TimelineEvent> {
    return (await this.recordAll(trx, afterCommit, [{ row, actorId, eventType, eventText, metadata }]))[0]!;
  }

  /** Several events as `record` writes each, in one insert (the timeline keeps their order). */
  async recordAll(trx: Executor, afterCommit: AfterCommit, events: PendingEvent[]): Promise<TimelineEvent[]> {
    if (events.length === 0) return [];
    // The instances' jobs and the events are independent statements: sent together (the connection
    // is pipelined), they take one round trip.
    const { instanceWritten } = this.ports();
    const jobs = instanceWritten
      ? [...new Set(events.map((e) => e.row.id))].map((id) => instanceWritten(trx, id))
      : [];
    const recording = this.deps.timeline.recordMany(
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
    const { notify } = this.ports();
    for (const [i, event] of recorded.entries()) {
      const { row } = events[i]!;
      const channelId = row.channel_id;
      if (!notify || channelId === null) continue;
      const title = typeof row.context.title === 'string' ? row.context.title : null;
      afterCommit(() =>
        notify({
          channelId,
          guildId: row.guild_id,
          instanceId: row.id,
          machineId: row.machine_id,
          title,
          event,
        }),
      );
    }
    return recorded;
  }

  /** Enters `to` (a new visit; the version bumps once), records the transition, runs the entry
   * (`before`: events of the same write to record first, in the entry's one insert). The events
   * do not wait for the update: they name the instance, its new state and visit, known already,
   * and go out with it (the connection is pipelined) unless the entry's actions read first. */
  async move(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    def: WorkflowDefinition,
    to: string,
    actor: WorkflowActor,
    how: { auto: boolean; suggestionId: string | null },
    before: PendingEvent[] = [],
  ): Promise<{ row: repo.InstanceRow; events: TimelineEvent[] }> {
    const { terminal, actions } = stateOf(def, to)!;
    const written = repo.enterState(trx, row.id, to, actor.id, terminal);
    written.catch(() => undefined); // awaited in the entry, whose first failure is reported
    // What the entry's actions read goes out with the update and is waited for with it (the
    // update first: its failure is the one to report); without actions nothing is waited for.
    const reads = actions.length
      ? (await together([written, this.entryReads(trx, row, actions)]))[1]
      : NO_READS;
    // The instance as the entry's events and actions read it; its version and times come with
    // the update's answer.
    const entered: repo.InstanceRow = { ...row, state: to, state_visit: row.state_visit + 1 };
    const transition: PendingEvent = {
      row: entered,
      actorId: actor.id,
      eventType: 'workflow_transition',
      eventText: `${row.state} → ${to}${how.auto ? ' (automatic)' : ''}`,
      metadata: { from: row.state, to, auto: how.auto, undo: false, suggestionId: how.suggestionId },
    };
    return this.onEntry(trx, afterCommit, entered, def, actor, [...before, transition], { written, reads });
  }

  /** What a state's entry actions read, read at once: the instance's artifacts (collectArtifacts),
   * its active run and whether a run may start (announceExecutionStart). None of it depends on the
   * instance's own row, so it can go out with the state's update. */
  async entryReads(trx: Executor, row: repo.InstanceRow, actions: readonly string[]): Promise<EntryReads> {
    const { runExecutor, autoRunOrchestrator } = this.ports();
    const creator = row.created_by_user_id;
    const executes = actions.includes('announceExecutionStart');
    const [artifacts, active, mayStart] = await together([
      actions.includes('collectArtifacts') ? repo.listArtifacts(trx, row.id) : [],
      executes ? runs.findActiveRun(trx, row.id) : undefined,
      // An executor is wired, and the creator's autoRunOrchestrator (on by default).
      executes && runExecutor && creator !== null ? (autoRunOrchestrator?.(creator, trx) ?? true) : false,
    ]);
    return { artifacts, active, mayStart };
  }

  /** A state's entry: its checklist, its actions in order, and completion when terminal; their
   * events (after `before`, the write's own) in one insert at the end, in that order, sent
   * without waiting for the answers to the statements before it unless an event names what they
   * answer. `entering`: the state's update and the reads `move` started (else `row` is the
   * instance as written, and the reads are made here). Answers with the instance as the entry's
   * last update of it left it. */
  async onEntry(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    def: WorkflowDefinition,
    actor: WorkflowActor,
    before: PendingEvent[] = [],
    entering?: Entering,
  ): Promise<{ row: repo.InstanceRow; events: TimelineEvent[] }> {
    const state = stateOf(def, row.state)!;
    const { written, reads } = entering ?? {
      written: Promise.resolve(row),
      reads: await this.entryReads(trx, row, state.actions),
    };
    const pending: PendingEvent[] = [
      ...before,
      {
        row,
        actorId: actor.id,
        eventType: 'workflow_checklist',
        eventText: state.checklist.length
          ? `Checklist for ${row.state}: ${state.checklist.join('; ')}`
          : `No checklist for ${row.state}`,
        metadata: { items: state.checklist },
      },
    ];
    // The instance as the entry's last update of it leaves it.
    let last = written;
    for (const action of state.actions)
      if (action === 'announceExecutionStart')
        last = this.announceExecutionStart(trx, afterCommit, row, actor, pending, reads) ?? last;
      // The update was answered with the reads (move), or was the caller's (create).
      else await this.collectArtifacts(trx, afterCommit, row, actor, pending, reads.artifacts);
    if (state.terminal) {
      // Its event names the archiving time and the runs canceled: their answers come first.
      const [archived, canceled, cleared] = await together([
        last,
        runs.cancelActiveRuns(trx, row.id),
        row.active_run_id === null ? null : repo.setActiveRun(trx, row.id, null),
      ]);
      const current = cleared ?? archived;
      last = Promise.resolve(current);
      pending.push({
        row: current,
        actorId: actor.id,
        eventType: 'workflow_completed',
        eventText: `Workflow completed and archived`,
        metadata: {
          archivedAt: current.archived_at?.toISOString() ?? null,
          canceledRunIds: canceled.map((r) => r.id),
        },
      });
    }
    const [current, events] = await together([last, this.recordAll(trx, afterCommit, pending)]);
    return { row: current, events };
  }

  /** announceExecutionStart: event (and so a notification), an orchestrator run (trigger state_entry) unless
   * one runs, no executor is wired, or the creator's autoRunOrchestrator is off. Answers with the
   * instance's update naming the run, made and not yet answered, when it started one. */
  private announceExecutionStart(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
    pending: PendingEvent[],
    { active, mayStart }: EntryReads,
  ): Promise<repo.InstanceRow> | undefined {
    let runId = active?.id ?? null;
    let named: Promise<repo.InstanceRow> | undefined;
    if (!active && mayStart) {
      const started = this.startRun(trx, afterCommit, row, 'state_entry', [], actor.id);
      runId = started.id;
      named = started.done.then((d) => d.instance);
      named.catch(() => undefined); // awaited in the entry, whose first failure is reported
    }
    pending.push({
      row,
      actorId: actor.id,
      eventType: 'workflow_execution_started',
      eventText: `Execution started in ${row.state}`,
      metadata: { runId },
    });
    return named;
  }

  /** collectArtifacts: event (and so a notification), a `shared` memory for the creator listing the
   * artifacts, and, when a tracker is configured, an issue filed by its job (the event names it;
   * its number and URL reach the artifacts once it is created). */
  private async collectArtifacts(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
    pending: PendingEvent[],
    artifacts: repo.ArtifactListRow[],
  ): Promise<void> {
    const list = artifacts.map((a) => ({
      id: a.id,
      taskId: a.task_id,
      summary: a.summary,
      reviewStatus: a.review_status,
    }));
    const lines = list.map((a) => `- ${a.summary || '(no summary)'} [${a.reviewStatus}] (${a.id})`);
    const title = typeof row.context.title === 'string' ? row.context.title : null;
    const text =
      `Artifacts of workflow ${title === null ? row.id : `"${title}"`} (${row.machine_id}) at ${row.state}: ${list.length}\n${lines.join('\n')}`.trim();
    const issue = this.deps.issues?.file(
      trx,
      {
        instanceId: row.id,
        machineId: row.machine_id,
        title,
        state: row.state,
        stateVisit: row.state_visit,
        artifacts: list,
      },
      afterCommit,
    );
    // The memory and the issue's statements are independent: sent together, one round trip.
    const [memory] = await together([
      row.created_by_user_id === null
        ? null
        : // Every write here runs inside transaction(), whose executor is a Trx.
          this.deps.addMemory(
            {
              userId: row.created_by_user_id,
              content: text,
              source: 'shared',
              metadata: { stateMachineInstanceId: row.id, machineId: row.machine_id, state: row.state },
            },
            trx as Trx,
          ),
      issue?.written,
    ]);
    pending.push({
      row,
      actorId: actor.id,
      eventType: 'workflow_artifacts_collected',
      eventText: `${list.length} artifact(s) collected in ${row.state}`,
      metadata: {
        artifacts: list,
        memoryId: memory?.id ?? null,
        issue: issue ? { id: issue.id, status: 'pending' } : null,
      },
    });
  }

  /** Creates a queued run, makes it the instance's active run, and hands it to the executor after
   * commit. The caller checked that none is active (the unique index decides a race). Answers at
   * once with the run's id (made here, so the instance can name it in the same round trip) and
   * the two statements, made and not yet answered. */
  startRun(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    trigger: RunTrigger,
    taskIds: string[],
    actorId: number | null,
  ): { id: string; done: Promise<{ run: runs.RunRow; instance: repo.InstanceRow }> } {
    const executor = this.ports().runExecutor;
    if (!executor)
      throw new AppError('service_unavailable', 'No orchestrator runs workflow tasks on this node');
    const id = randomUUID();
    const done = together([
      runs.insertRun(trx, { id, instanceId: row.id, trigger, taskIds, userId: actorId }),
      repo.setActiveRun(trx, row.id, id),
    ]).then(([run, instance]) => ({ run, instance }));
    afterCommit(() => executor({ id, instanceId: row.id, trigger, taskIds }));
    return { id, done };
  }
}
