// Workflow state machines (spec "State machine instance", "States and transitions"; contract
// "Workflows"): definitions, instances, transitions, approvals, evidence and the entry actions.
// Every write locks the instance row, checks `expectedVersion`, asks the XState machine with the
// approvals and evidence of the current state visit, and writes its timeline events in the same
// transaction (broadcast to the instance's observer after commit).
import { type Db, type Executor, type Trx, transaction } from '../../platform/db/database.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import type { AddMemoryInput } from '../memory/index.js';
import type { AfterCommit, TimelineEvent, TimelineService } from '../timeline/index.js';
import type { ProtocolDefinition } from '../protocols/index.js';
import {
  WORKFLOW_DEFINITIONS,
  WORKFLOW_PROTOCOLS,
  type GuardName,
  type WorkflowDefinition,
} from './workflows.definitions.js';
import * as repo from './workflows.repository.js';
import {
  allowedTransitions,
  autoAdvance,
  decideTransition,
  definitionProblems,
  stateOf,
  type VisitRecords,
} from './workflows.rules.js';
import type {
  Advanced,
  Approval,
  CreateInstanceInput,
  ListInstancesQuery,
  WorkflowInstance,
} from './workflows.schemas.js';
import type { RunTrigger } from './workflows.tables.js';

/** Who acts: the signed-in user (routes), or a command's linked user (chat-platform, later). */
export interface WorkflowActor {
  id: number;
  name: string;
  admin: boolean;
}

/** A run handed to whatever executes runs (the orchestrator's job). */
export interface RunHandle {
  id: string;
  instanceId: string;
  trigger: RunTrigger;
  taskIds: string[];
}

/** Seams for the parts built beside this module: the orchestrator executes runs, the suggestions
 * configuration says whether execution start kicks one off, the chat-platform adapter posts
 * notifications. Each is optional: without an executor no run is started on entry and a rerun is
 * refused (503), without a notifier nothing is posted. */
export interface WorkflowPorts {
  /** Executes a committed run (called after commit). */
  runExecutor?: ((run: RunHandle) => void) | undefined;
  /** The creator's `autoRunOrchestrator` (default true). */
  autoRunOrchestrator?: ((userId: number) => Promise<boolean>) | undefined;
  /** Posts to a chat-platform channel (called after commit; must not throw). */
  notify?: ((n: { channelId: string; guildId: string | null; text: string }) => void) | undefined;
}

export interface WorkflowsDeps {
  db: Db;
  timeline: TimelineService;
  protocols: {
    seedBuiltin(list: readonly (ProtocolDefinition & { id: string })[]): Promise<{ inserted: string[] }>;
  };
  /** The memory module's addMemory (collectArtifacts writes the creator a `shared` memory). */
  addMemory: (input: AddMemoryInput, trx: Trx) => Promise<{ id: number }>;
  /** Whether a user id is a character (an NPC or the assistant): task assignment. */
  isCharacter: (userId: number, executor: Executor) => Promise<boolean>;
}

type Access = { participant: boolean; approver: boolean };

const iso = (d: Date) => d.toISOString();

export function toApproval(r: repo.ApprovalRow): Approval {
  return {
    id: r.id,
    instanceId: r.instance_id,
    state: r.state,
    stateVisit: r.state_visit,
    approvedByUserId: r.approved_by_user_id,
    approvedByName: r.approved_by_name,
    note: r.note,
    createdAt: iso(r.created_at),
  };
}

export class WorkflowsService {
  private readonly definitions = new Map<string, WorkflowDefinition>();
  ports: WorkflowPorts = {};

  constructor(readonly deps: WorkflowsDeps) {}

  private get db() {
    return this.deps.db;
  }

  /** Wires the parts built beside this module (composition root). */
  usePorts(ports: WorkflowPorts): void {
    this.ports = { ...this.ports, ...ports };
  }

  /** First start: the workflow protocols (protocols module), then the definitions; inserts only
   * what is missing, never overwrites. */
  async seed(): Promise<{ inserted: string[] }> {
    await this.deps.protocols.seedBuiltin(WORKFLOW_PROTOCOLS);
    const inserted: string[] = [];
    for (const def of WORKFLOW_DEFINITIONS) {
      const problems = definitionProblems(def);
      if (problems.length) throw new Error(`definition ${def.machineId}: ${problems.join('; ')}`);
      if (await repo.insertDefinitionIfAbsent(this.db, def)) inserted.push(def.machineId);
    }
    return { inserted };
  }

  // ---- definitions -------------------------------------------------------------------------

  async listDefinitions(executor: Executor = this.db): Promise<WorkflowDefinition[]> {
    const defs = await repo.listDefinitions(executor);
    for (const d of defs) this.definitions.set(d.machineId, d);
    return defs;
  }

  /** A stored definition (cached: a definition never changes under its id), or undefined. */
  async findDefinition(
    machineId: string,
    executor: Executor = this.db,
  ): Promise<WorkflowDefinition | undefined> {
    if (!this.definitions.has(machineId)) await this.listDefinitions(executor);
    return this.definitions.get(machineId);
  }

  async getDefinition(machineId: string): Promise<WorkflowDefinition> {
    const def = await this.findDefinition(machineId);
    if (!def) throw notFound('workflow definition');
    return def;
  }

  private async definitionOf(row: repo.InstanceRow, executor: Executor): Promise<WorkflowDefinition> {
    const def = await this.findDefinition(row.machine_id, executor);
    if (!def) throw new Error(`instance ${row.id} names no stored definition ${row.machine_id}`);
    return def;
  }

  // ---- access ------------------------------------------------------------------------------

  /** The owner of the instance's observer: its linked registry instance's observer, else the root. */
  private async observerOwnerId(row: repo.InstanceRow, executor: Executor): Promise<number | null> {
    const { timeline } = this.deps;
    const linked =
      row.registry_instance_id === null
        ? undefined
        : await timeline.getInstance(row.registry_instance_id, executor);
    const observerId = linked
      ? await timeline.observerIdOf(linked, executor)
      : await timeline.rootObserverId(executor);
    const observer = observerId === linked?.id ? linked : await timeline.getInstance(observerId, executor);
    return observer?.userId ?? null;
  }

  /** Participants: the creator, admins, the observer's owner; approvers: admins and that owner. */
  private async accessOf(row: repo.InstanceRow, actor: WorkflowActor, executor: Executor): Promise<Access> {
    if (actor.admin) return { participant: true, approver: true };
    const approver = (await this.observerOwnerId(row, executor)) === actor.id;
    return { participant: approver || row.created_by_user_id === actor.id, approver };
  }

  /** The instance a participant names (row-locked when `lock`); 404 for anyone else. */
  async participantInstance(
    executor: Executor,
    id: string,
    actor: WorkflowActor,
    opts: { lock?: boolean; approver?: boolean } = {},
  ): Promise<repo.InstanceRow> {
    const row = await repo.findInstance(executor, id, opts.lock ?? false);
    if (!row) throw notFound('workflow instance');
    const access = await this.accessOf(row, actor, executor);
    if (!access.participant) throw notFound('workflow instance');
    if (opts.approver && !access.approver)
      throw new AppError(
        'forbidden',
        "Only an administrator or the owner of the instance's observer may approve",
      );
    return row;
  }

  /** A write to an instance, its tasks or artifacts: refused once completed, or on a stale version. */
  checkWritable(row: repo.InstanceRow, expectedVersion?: number): void {
    if (row.archived_at !== null)
      throw new AppError('conflict', 'The workflow instance is completed and archived; it is read-only', {
        version: row.version,
      });
    checkVersion(row, expectedVersion);
  }

  // ---- views -------------------------------------------------------------------------------

  /** The approvals and evidence of each instance's current state visit. */
  private async visitRecords(
    executor: Executor,
    rows: repo.InstanceRow[],
  ): Promise<Map<string, VisitRecords>> {
    const out = new Map<string, VisitRecords>(rows.map((r) => [r.id, { approvals: 0, evidence: 0 }]));
    if (rows.length === 0) return out;
    const byId = new Map(rows.map((r) => [r.id, r]));
    const ids = rows.map((r) => r.id);
    const atVisit = (id: string, state: unknown, visit: unknown) => {
      const r = byId.get(id);
      return r !== undefined && r.state === state && r.state_visit === visit;
    };
    const [approvals, evidence] = await Promise.all([
      repo.countApprovals(executor, ids),
      this.deps.timeline.listForStateMachines(
        { stateMachineInstanceIds: ids, eventType: 'verification_evidence' },
        executor,
      ),
    ]);
    for (const a of approvals)
      if (atVisit(a.instance_id, a.state, a.state_visit)) out.get(a.instance_id)!.approvals += Number(a.n);
    for (const e of evidence) {
      const id = String(e.metadata.stateMachineInstanceId);
      if (atVisit(id, e.metadata.state, e.metadata.stateVisit)) out.get(id)!.evidence += 1;
    }
    return out;
  }

  private async views(executor: Executor, rows: repo.InstanceRow[]): Promise<WorkflowInstance[]> {
    const records = await this.visitRecords(executor, rows);
    const out: WorkflowInstance[] = [];
    for (const row of rows)
      out.push(toView(row, await this.definitionOf(row, executor), records.get(row.id)!));
    return out;
  }

  async view(executor: Executor, row: repo.InstanceRow): Promise<WorkflowInstance> {
    return (await this.views(executor, [row]))[0]!;
  }

  // ---- timeline ----------------------------------------------------------------------------

  /** One `workflow_*` event of an instance: linked to its registry instance (else the root
   * observer), metadata naming the instance, machine, state and visit. */
  event(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actorId: number | null,
    eventType: string,
    eventText: string,
    metadata: Record<string, unknown> = {},
  ): Promise<TimelineEvent> {
    return this.deps.timeline.record(
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
  }

  private notify(afterCommit: AfterCommit, row: repo.InstanceRow, text: string): void {
    const { notify } = this.ports;
    const channelId = row.channel_id;
    if (!notify || channelId === null) return;
    afterCommit(() => notify({ channelId, guildId: row.guild_id, text }));
  }

  // ---- instances ---------------------------------------------------------------------------

  async create(actor: WorkflowActor, input: CreateInstanceInput): Promise<WorkflowInstance> {
    const def = await this.findDefinition(input.machineId);
    if (!def)
      throw new AppError('invalid_definition', `No workflow definition ${input.machineId}`, {
        errors: [{ path: 'machineId', message: 'no such workflow definition' }],
      });
    if (input.protocolId !== undefined && input.protocolId !== def.protocolId)
      throw new AppError(
        'invalid_definition',
        `${input.protocolId} is not the workflow protocol of ${def.machineId} (${def.protocolId})`,
        { errors: [{ path: 'protocolId', message: `must be ${def.protocolId}` }] },
      );
    if (input.registryInstanceId !== undefined && !actor.admin)
      throw new AppError('forbidden', 'Only administrators may link a registry instance');
    return transaction(this.db, async (trx, afterCommit) => {
      if (
        input.registryInstanceId !== undefined &&
        !(await this.deps.timeline.getInstance(input.registryInstanceId, trx))
      )
        throw validationFailed([
          { path: 'registryInstanceId', message: `no registry instance ${input.registryInstanceId}` },
        ]);
      const row = await repo.insertInstance(trx, {
        machineId: def.machineId,
        protocolId: def.protocolId,
        state: def.initial,
        context: input.context ?? {},
        channelId: input.channelId ?? null,
        guildId: input.guildId ?? null,
        userId: actor.id,
        registryInstanceId: input.registryInstanceId ?? null,
      });
      const title = typeof row.context.title === 'string' ? ` "${row.context.title}"` : '';
      await this.event(
        trx,
        afterCommit,
        row,
        actor.id,
        'workflow_instance_created',
        `Workflow${title} (${def.machineId}) created in ${row.state}`,
        { protocolId: row.protocol_id },
      );
      const entered = await this.onEntry(trx, afterCommit, row, def, actor);
      return this.view(trx, entered);
    });
  }

  async get(actor: WorkflowActor, id: string): Promise<WorkflowInstance> {
    return this.view(this.db, await this.participantInstance(this.db, id, actor));
  }

  /** Newest first; non-admins see the instances they created. */
  async list(actor: WorkflowActor, q: ListInstancesQuery) {
    const { rows, total } = await repo.listInstances(this.db, {
      ...q,
      createdByUserId: actor.admin ? undefined : actor.id,
    });
    return { instances: await this.views(this.db, rows), total, limit: q.limit, offset: q.offset };
  }

  async timeline(actor: WorkflowActor, id: string, limit: number): Promise<TimelineEvent[]> {
    await this.participantInstance(this.db, id, actor);
    return this.deps.timeline.listForStateMachines({ stateMachineInstanceIds: [id], limit });
  }

  async transition(
    actor: WorkflowActor,
    id: string,
    input: { targetState: string; expectedVersion?: number | undefined; suggestionId?: string | null },
  ): Promise<WorkflowInstance> {
    return transaction(this.db, async (trx, afterCommit) => {
      const row = await this.participantInstance(trx, id, actor, { lock: true });
      checkVersion(row, input.expectedVersion);
      const def = await this.definitionOf(row, trx);
      const records = (await this.visitRecords(trx, [row])).get(row.id)!;
      const d = decideTransition(def, row.state, input.targetState, records, row.archived_at !== null);
      if (d.kind === 'invalid_transition')
        throw new AppError(
          'invalid_transition',
          d.allowed.length
            ? `${def.machineId} has no transition ${d.from} → ${d.to}; from ${d.from} it may go to ${d.allowed.join(', ')}`
            : `${def.machineId} has no transition out of ${d.from}${row.archived_at ? ' (the instance is completed)' : ''}`,
          { from: d.from, to: d.to, allowed: d.allowed },
        );
      if (d.kind === 'guard_not_satisfied')
        throw new AppError('guard_not_satisfied', d.detail, { guard: d.guard, missing: d.missing });
      const moved = await this.move(trx, afterCommit, row, def, d.to, actor, {
        auto: false,
        suggestionId: input.suggestionId ?? null,
      });
      return this.view(trx, moved);
    });
  }

  async approvals(actor: WorkflowActor, id: string): Promise<Approval[]> {
    await this.participantInstance(this.db, id, actor);
    return (await repo.listApprovals(this.db, id)).map(toApproval);
  }

  async approve(
    actor: WorkflowActor,
    id: string,
    input: { note?: string | undefined; expectedVersion?: number | undefined },
  ): Promise<{ approval: Approval; instance: WorkflowInstance; advanced: Advanced }> {
    return transaction(this.db, async (trx, afterCommit) => {
      const row = await this.participantInstance(trx, id, actor, { lock: true, approver: true });
      this.checkWritable(row, input.expectedVersion);
      const approval = toApproval(
        await repo.insertApproval(trx, {
          instanceId: id,
          state: row.state,
          stateVisit: row.state_visit,
          userId: actor.id,
          name: actor.name,
          note: input.note ?? null,
        }),
      );
      await this.event(
        trx,
        afterCommit,
        row,
        actor.id,
        'workflow_approval',
        `${actor.name} approved ${row.state}`,
        { approvalId: approval.id, note: approval.note },
      );
      const { instance, advanced } = await this.touchAndAdvance(trx, afterCommit, row, actor);
      return { approval, instance, advanced };
    });
  }

  async evidence(
    actor: WorkflowActor,
    id: string,
    input: { description: string; proofUrl: string; expectedVersion?: number | undefined; source?: string },
  ): Promise<{ evidence: TimelineEvent; instance: WorkflowInstance; advanced: Advanced }> {
    return transaction(this.db, async (trx, afterCommit) => {
      const row = await this.participantInstance(trx, id, actor, { lock: true });
      this.checkWritable(row, input.expectedVersion);
      const evidence = await this.recordEvidence(trx, afterCommit, row, actor.id, {
        description: input.description,
        proofUrl: input.proofUrl,
        source: input.source ?? 'api',
      });
      const { instance, advanced } = await this.touchAndAdvance(trx, afterCommit, row, actor);
      return { evidence, instance, advanced };
    });
  }

  /** A `verification_evidence` event of the current state visit (the URL is stored, never fetched). */
  recordEvidence(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actorId: number,
    e: { description: string; proofUrl: string | null; source: string; [k: string]: unknown },
  ): Promise<TimelineEvent> {
    return this.event(trx, afterCommit, row, actorId, 'verification_evidence', e.description, e);
  }

  /** After an approval or evidence: bumps the version, then takes the state's guarded exit when
   * its guard now holds (auto-advance, one hop). */
  async touchAndAdvance(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
  ): Promise<{ instance: WorkflowInstance; advanced: Advanced }> {
    const def = await this.definitionOf(row, trx);
    const records = (await this.visitRecords(trx, [row])).get(row.id)!;
    const hop = autoAdvance(def, row.state, records);
    const next = hop
      ? await this.move(trx, afterCommit, row, def, hop.to, actor, { auto: true, suggestionId: null })
      : await repo.updateInstance(trx, row.id, { updated_by_user_id: actor.id });
    return { instance: await this.view(trx, next), advanced: hop };
  }

  /** Enters `to` (a new visit; the version bumps once), records the transition, runs the entry. */
  private async move(
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
    await this.event(
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
  private async onEntry(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    def: WorkflowDefinition,
    actor: WorkflowActor,
  ): Promise<repo.InstanceRow> {
    const state = stateOf(def, row.state)!;
    await this.event(
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
      const canceled = await repo.cancelActiveRuns(trx, row.id);
      if (current.active_run_id !== null) current = await repo.setActiveRun(trx, row.id, null);
      await this.event(
        trx,
        afterCommit,
        current,
        actor.id,
        'workflow_completed',
        `Workflow completed and archived`,
        { archivedAt: current.archived_at?.toISOString() ?? null, canceledRunIds: canceled.map((r) => r.id) },
      );
      this.notify(afterCommit, current, `Workflow ${current.id} (${def.machineId}) is completed.`);
    }
    return current;
  }

  /** announceExecutionStart: event, notification, an orchestrator run (trigger state_entry) unless
   * one runs, no executor is wired, or the creator's autoRunOrchestrator is off. */
  private async announceExecutionStart(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
  ): Promise<repo.InstanceRow> {
    let current = row;
    const active = await repo.findActiveRun(trx, row.id);
    let runId = active?.id ?? null;
    const executor = this.ports.runExecutor;
    const creator = row.created_by_user_id;
    const autoRun =
      creator !== null && (await (this.ports.autoRunOrchestrator?.(creator) ?? Promise.resolve(true)));
    if (!active && executor && autoRun) {
      const run = await this.startRun(trx, afterCommit, row, 'state_entry', [], actor.id);
      runId = run.id;
      current = await repo.findInstance(trx, row.id).then((r) => r!);
    }
    await this.event(
      trx,
      afterCommit,
      current,
      actor.id,
      'workflow_execution_started',
      `Execution started in ${row.state}`,
      { runId },
    );
    this.notify(
      afterCommit,
      current,
      `Workflow ${row.id} (${row.machine_id}) entered ${row.state}: execution starts.`,
    );
    return current;
  }

  /** collectArtifacts: event, notification, and a `shared` memory for the creator listing the
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
    await this.event(
      trx,
      afterCommit,
      row,
      actor.id,
      'workflow_artifacts_collected',
      `${list.length} artifact(s) collected in ${row.state}`,
      { artifacts: list, memoryId, issue: null },
    );
    this.notify(afterCommit, row, text);
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
  ): Promise<repo.RunRow> {
    const executor = this.ports.runExecutor;
    if (!executor)
      throw new AppError('service_unavailable', 'No orchestrator runs workflow tasks on this node');
    const run = await repo.insertRun(trx, { instanceId: row.id, trigger, taskIds, userId: actorId });
    await repo.setActiveRun(trx, row.id, run.id);
    afterCommit(() => executor({ id: run.id, instanceId: row.id, trigger, taskIds }));
    return run;
  }
}

function checkVersion(row: repo.InstanceRow, expected: number | undefined): void {
  if (expected !== undefined && expected !== row.version)
    throw new AppError(
      'conflict',
      `The instance is at version ${row.version}, not ${expected}; read it again and retry`,
      { version: row.version },
    );
}

export function toView(
  row: repo.InstanceRow,
  def: WorkflowDefinition,
  records: VisitRecords,
): WorkflowInstance {
  const archived = row.archived_at !== null;
  return {
    id: row.id,
    machineId: row.machine_id,
    protocolId: row.protocol_id,
    state: row.state,
    context: row.context,
    channelId: row.channel_id,
    guildId: row.guild_id,
    createdByUserId: row.created_by_user_id,
    updatedByUserId: row.updated_by_user_id,
    version: row.version,
    stateVisit: row.state_visit,
    stateEnteredAt: iso(row.state_entered_at),
    checklist: stateOf(def, row.state)?.checklist ?? [],
    allowedTransitions: allowedTransitions(def, row.state, records, archived),
    registryInstanceId: row.registry_instance_id,
    activeRunId: row.active_run_id,
    archivedAt: row.archived_at ? iso(row.archived_at) : null,
    createdAt: iso(row.created_at),
  };
}

export type { GuardName };
