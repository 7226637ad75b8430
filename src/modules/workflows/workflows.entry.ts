// A workflow instance's state entries (contract "Workflows"): the transition event, the entry
// checklist, the state's actions (announceExecutionStart, collectArtifacts), completion (archived,
// the active run canceled), and the one way this module writes its timeline events: in the
// caller's transaction, linked to the instance's registry instance (else the root observer),
// broadcast after commit and handed to the chat-platform notification port.
import type { Executor, Trx } from '../../platform/db/database.js';
import { AppError } from '../../platform/http/problem.js';
import type { AfterCommit, TimelineEvent } from '../timeline/index.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import { stateOf } from './workflows.rules.js';
import type { RunTrigger } from './workflows.tables.js';
import type { WorkflowActor, WorkflowPorts, WorkflowsDeps } from './workflows.types.js';

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
    await this.ports().instanceWritten?.(trx, row.id);
    const event = await this.deps.timeline.record(
      trx,
      {
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
      },
      afterCommit,
    );
    const { notify } = this.ports();
    const channelId = row.channel_id;
    if (notify && channelId !== null) {
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
    return event;
  }

  /** Enters `to` (a new visit; the version bumps once), records the transition, runs the entry. */
  async move(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    def: WorkflowDefinition,
    to: string,
    actor: WorkflowActor,
    how: { auto: boolean; suggestionId: string | null },
  ): Promise<repo.InstanceRow> {
    const terminal = stateOf(def, to)!.terminal;
    const entered = await repo.enterState(trx, row.id, to, actor.id, terminal);
    await this.record(
      trx,
      afterCommit,
      entered,
      actor.id,
      'workflow_transition',
      `${row.state} → ${to}${how.auto ? ' (automatic)' : ''}`,
      { from: row.state, to, auto: how.auto, undo: false, suggestionId: how.suggestionId },
    );
    return this.onEntry(trx, afterCommit, entered, def, actor);
  }

  /** A state's entry: its checklist, its actions in order, and completion when terminal. */
  async onEntry(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    def: WorkflowDefinition,
    actor: WorkflowActor,
  ): Promise<repo.InstanceRow> {
    const state = stateOf(def, row.state)!;
    await this.record(
      trx,
      afterCommit,
      row,
      actor.id,
      'workflow_checklist',
      state.checklist.length
        ? `Checklist for ${row.state}: ${state.checklist.join('; ')}`
        : `No checklist for ${row.state}`,
      { items: state.checklist },
    );
    let current = row;
    for (const action of state.actions)
      current =
        action === 'announceExecutionStart'
          ? await this.announceExecutionStart(trx, afterCommit, current, actor)
          : await this.collectArtifacts(trx, afterCommit, current, actor);
    if (state.terminal) {
      const canceled = await runs.cancelActiveRuns(trx, row.id);
      if (current.active_run_id !== null) current = await repo.setActiveRun(trx, row.id, null);
      await this.record(
        trx,
        afterCommit,
        current,
        actor.id,
        'workflow_completed',
        `Workflow completed and archived`,
        { archivedAt: current.archived_at?.toISOString() ?? null, canceledRunIds: canceled.map((r) => r.id) },
      );
    }
    return current;
  }

  /** announceExecutionStart: event (and so a notification), an orchestrator run (trigger state_entry) unless
   * one runs, no executor is wired, or the creator's autoRunOrchestrator is off. */
  private async announceExecutionStart(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
  ): Promise<repo.InstanceRow> {
    let current = row;
    const active = await runs.findActiveRun(trx, row.id);
    let runId = active?.id ?? null;
    const { runExecutor, autoRunOrchestrator } = this.ports();
    const creator = row.created_by_user_id;
    if (!active && runExecutor && creator !== null && ((await autoRunOrchestrator?.(creator, trx)) ?? true)) {
      const started = await this.startRun(trx, afterCommit, row, 'state_entry', [], actor.id);
      runId = started.run.id;
      current = started.instance;
    }
    await this.record(
      trx,
      afterCommit,
      current,
      actor.id,
      'workflow_execution_started',
      `Execution started in ${row.state}`,
      { runId },
    );
    return current;
  }

  /** collectArtifacts: event (and so a notification), and a `shared` memory for the creator listing the
   * artifacts (no issue tracker is configured). */
  private async collectArtifacts(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
  ): Promise<repo.InstanceRow> {
    const artifacts = await repo.listArtifacts(trx, row.id);
    const list = artifacts.map((a) => ({
      id: a.id,
      taskId: a.task_id,
      summary: a.summary,
      reviewStatus: a.review_status,
    }));
    const lines = list.map((a) => `- ${a.summary || '(no summary)'} [${a.reviewStatus}] (${a.id})`);
    const title = typeof row.context.title === 'string' ? `"${row.context.title}"` : row.id;
    const text =
      `Artifacts of workflow ${title} (${row.machine_id}) at ${row.state}: ${list.length}\n${lines.join('\n')}`.trim();
    let memoryId: number | null = null;
    if (row.created_by_user_id !== null) {
      // Every write here runs inside transaction(), whose executor is a Trx.
      const memory = await this.deps.addMemory(
        {
          userId: row.created_by_user_id,
          content: text,
          source: 'shared',
          metadata: { stateMachineInstanceId: row.id, machineId: row.machine_id, state: row.state },
        },
        trx as Trx,
      );
      memoryId = memory.id;
    }
    await this.record(
      trx,
      afterCommit,
      row,
      actor.id,
      'workflow_artifacts_collected',
      `${list.length} artifact(s) collected in ${row.state}`,
      { artifacts: list, memoryId, issue: null },
    );
    return row;
  }

  /** Creates a queued run, makes it the instance's active run, and hands it to the executor after
   * commit. The caller checked that none is active (the unique index decides a race). */
  async startRun(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    trigger: RunTrigger,
    taskIds: string[],
    actorId: number | null,
  ): Promise<{ run: runs.RunRow; instance: repo.InstanceRow }> {
    const executor = this.ports().runExecutor;
    if (!executor)
      throw new AppError('service_unavailable', 'No orchestrator runs workflow tasks on this node');
    const run = await runs.insertRun(trx, { instanceId: row.id, trigger, taskIds, userId: actorId });
    const instance = await repo.setActiveRun(trx, row.id, run.id);
    afterCommit(() => executor({ id: run.id, instanceId: row.id, trigger, taskIds }));
    return { run, instance };
  }
}
