// Workflow state machines (spec "State machine instance", "States and transitions"; contract
// "Workflows"): definitions, instances, transitions, approvals and evidence (entries and their
// actions: workflows.entry.ts).
// Every write locks the instance row, checks `expectedVersion`, asks the XState machine with the
// approvals and evidence of the current state visit, and writes its timeline events in the same
// transaction (broadcast to the instance's observer after commit).
import { randomUUID } from 'node:crypto';
import { type Executor, together, transaction } from '../../platform/db/database.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import type { AfterCommit, TimelineEvent } from '../timeline/index.js';
import { type PendingEvent, WorkflowEntry } from './workflows.entry.js';
import {
  WORKFLOW_DEFINITIONS,
  WORKFLOW_PROTOCOLS,
  type WorkflowDefinition,
} from './workflows.definitions.js';
import * as repo from './workflows.repository.js';
import {
  allowedTransitions,
  autoAdvance,
  countsRead,
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
import type { WorkflowActor, WorkflowPorts, WorkflowsDeps } from './workflows.types.js';

export type Access = { participant: boolean; approver: boolean };

/** An instance as one read found it (`readForCreator`); only the workflows module looks inside. */
export interface InstanceRead {
  readonly creatorId: number | null;
  readonly row: repo.InstanceRow;
}

/** The records of a state visit that just began. */
const NEW_VISIT: VisitRecords = Object.freeze({ approvals: 0, evidence: 0 });

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
  private ports: WorkflowPorts = {};
  /** Entries, entry actions and this module's timeline events. */
  readonly entry: WorkflowEntry;

  constructor(readonly deps: WorkflowsDeps) {
    this.entry = new WorkflowEntry(deps, () => this.ports);
  }

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

  /** Project statistics (the country dashboard): the state-machine instances with these ids, or
   * linked to these registry instances. */
  async projectStats(
    p: { ids: string[]; registryInstanceIds: number[] },
    executor: Executor = this.db,
  ): Promise<{ total: number; completed: number; inProgress: number; byState: Record<string, number> }> {
    const rows = await repo.statesOf(executor, p);
    const byState: Record<string, number> = {};
    let completed = 0;
    for (const r of rows) {
      byState[r.state] = (byState[r.state] ?? 0) + 1;
      if (r.archived_at !== null || r.state === 'completed') completed++;
    }
    return { total: rows.length, completed, inProgress: rows.length - completed, byState };
  }

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
    if (opts.approver) return (await this.participantAccess(executor, id, actor, opts)).row;
    const row = await repo.findInstance(executor, id, opts.lock ?? false);
    if (!row) throw notFound('workflow instance');
    // Admins and the creator take part whoever owns the observer: no need to read it.
    if (actor.admin || row.created_by_user_id === actor.id) return row;
    if (!(await this.accessOf(row, actor, executor)).participant) throw notFound('workflow instance');
    return row;
  }

  /** Like participantInstance, with what the actor may do there (approve or not). */
  async participantAccess(
    executor: Executor,
    id: string,
    actor: WorkflowActor,
    opts: { lock?: boolean; approver?: boolean } = {},
  ): Promise<{ row: repo.InstanceRow; access: Access }> {
    const row = await repo.findInstance(executor, id, opts.lock ?? false);
    if (!row) throw notFound('workflow instance');
    return { row, access: await this.accessTo(executor, row, actor, opts) };
  }

  /** What the actor may do at an instance already read: 404 unless a participant; 403 for anyone
   * but an approver when `approver`. */
  async accessTo(
    executor: Executor,
    row: repo.InstanceRow,
    actor: WorkflowActor,
    opts: { approver?: boolean } = {},
  ): Promise<Access> {
    const access = await this.accessOf(row, actor, executor);
    if (!access.participant) throw notFound('workflow instance');
    if (opts.approver && !access.approver)
      throw new AppError(
        'forbidden',
        "Only an administrator or the owner of the instance's observer may approve",
      );
    return access;
  }

  /** An instance and who created it (creatorId null: the account was deleted), or undefined when
   * gone; for work done on the creator's behalf after a write, such as the suggestions' pass,
   * which hands the read to `WorkflowTasksService.overview` so the instance is read once. */
  async readForCreator(id: string): Promise<InstanceRead | undefined> {
    const row = await repo.findInstance(this.db, id);
    return row && { creatorId: row.created_by_user_id, row };
  }

  /** The newest unarchived instance this user created for a chat-platform channel, or null. */
  async newestInChannel(userId: number, channelId: string): Promise<string | null> {
    return (await repo.newestUnarchivedInChannel(this.db, userId, channelId))?.id ?? null;
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

  /** The approvals and evidence of each instance's current state visit (`only`: that count
   * alone, the other left 0). */
  private async visitRecords(
    executor: Executor,
    rows: repo.InstanceRow[],
    only?: keyof VisitRecords,
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
      only === 'evidence' ? [] : repo.countApprovals(executor, ids),
      only === 'approvals'
        ? []
        : this.deps.timeline.listForStateMachines(
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

  /** What the decisions and the view of one instance read of its visit's records: the count of
   * its state's guarded exit alone (rules `countsRead`; nothing else reads the other). `known`: a
   * record of that kind was just written in this visit, so its count is at least one (no read). */
  private async guardRecords(
    executor: Executor,
    row: repo.InstanceRow,
    def: WorkflowDefinition,
    known?: keyof VisitRecords,
  ): Promise<VisitRecords> {
    const kind = countsRead(def, row.state, row.archived_at !== null);
    if (kind === null) return NEW_VISIT;
    if (kind === known) return { ...NEW_VISIT, [kind]: 1 };
    return (await this.visitRecords(executor, [row], kind)).get(row.id)!;
  }

  private async views(executor: Executor, rows: repo.InstanceRow[]): Promise<WorkflowInstance[]> {
    const records = await this.visitRecords(executor, rows);
    const out: WorkflowInstance[] = [];
    for (const row of rows)
      out.push(toView(row, await this.definitionOf(row, executor), records.get(row.id)!));
    return out;
  }

  async view(executor: Executor, row: repo.InstanceRow): Promise<WorkflowInstance> {
    const def = await this.definitionOf(row, executor);
    return toView(row, def, await this.guardRecords(executor, row, def));
  }

  /** The view of a row whose visit records the caller knows: a write that just entered a state
   * (a new visit has none), or that counted them itself. */
  private async viewWith(executor: Executor, row: repo.InstanceRow, records: VisitRecords) {
    return toView(row, await this.definitionOf(row, executor), records);
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
      if (row.registry_instance_id !== null)
        await this.deps.timeline.linkStateMachine(trx, row.registry_instance_id, row.id);
      const title = typeof row.context.title === 'string' ? ` "${row.context.title}"` : '';
      const { row: entered } = await this.entry.onEntry(trx, afterCommit, row, def, actor, [
        {
          row,
          actorId: actor.id,
          eventType: 'workflow_instance_created',
          eventText: `Workflow${title} (${def.machineId}) created in ${row.state}`,
          metadata: { protocolId: row.protocol_id },
        },
      ]);
      return this.viewWith(trx, entered, NEW_VISIT);
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
      // Only a guarded exit reads the visit's records (decideTransition).
      const exit = def.transitions.find((t) => t.from === row.state && t.to === input.targetState);
      const records = exit?.guard ? await this.guardRecords(trx, row, def) : NEW_VISIT;
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
      const { row: moved } = await this.entry.move(trx, afterCommit, row, def, d.to, actor, {
        auto: false,
        suggestionId: input.suggestionId ?? null,
      });
      return this.viewWith(trx, moved, NEW_VISIT);
    });
  }

  /** Takes back a transition (beyond the contract's instance routes; the suggestions' undo): the
   * instance, still at `expectedVersion` (else 409 `conflict`), goes back to the state `to` it
   * left by an exit of the definition, and to that state's visit `visit`, so the approvals and
   * evidence of that visit count again. Records `workflow_transition` with `undo: true`; no entry
   * checklist or actions run. A completed instance is read-only (409 `conflict`). */
  async undoTransition(
    actor: WorkflowActor,
    id: string,
    input: { expectedVersion: number; to: string; visit: number; suggestionId: string | null },
  ): Promise<WorkflowInstance> {
    return transaction(this.db, async (trx, afterCommit) => {
      const row = await this.participantInstance(trx, id, actor, { lock: true });
      this.checkWritable(row, input.expectedVersion);
      const def = await this.definitionOf(row, trx);
      if (!def.transitions.some((t) => t.from === input.to && t.to === row.state) || input.visit < 1)
        throw new AppError('invalid_transition', `${def.machineId} never moves ${input.to} → ${row.state}`, {
          from: row.state,
          to: input.to,
          allowed: [],
        });
      const back = await repo.restoreState(trx, id, input.to, input.visit, actor.id);
      await this.entry.record(
        trx,
        afterCommit,
        back,
        actor.id,
        'workflow_transition',
        `${row.state} → ${input.to} (undone)`,
        { from: row.state, to: input.to, auto: false, undo: true, suggestionId: input.suggestionId },
      );
      return this.view(trx, back);
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
      // The approval's id is made here: its event names it, so the insert need not be answered
      // before the advance starts, and it goes out with the instance's update (one round trip).
      const approvalId = randomUUID();
      const note = input.note ?? null;
      const [inserted, { instance, advanced }] = await together([
        repo.insertApproval(trx, {
          id: approvalId,
          instanceId: id,
          state: row.state,
          stateVisit: row.state_visit,
          userId: actor.id,
          name: actor.name,
          note,
        }),
        this.touchAndAdvance(trx, afterCommit, row, actor, {
          known: 'approvals',
          before: [
            {
              row,
              actorId: actor.id,
              eventType: 'workflow_approval',
              eventText: `${actor.name} approved ${row.state}`,
              metadata: { approvalId, note },
            },
          ],
        }),
      ]);
      return { approval: toApproval(inserted), instance, advanced };
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
      const { instance, advanced, events } = await this.touchAndAdvance(trx, afterCommit, row, actor, {
        known: 'evidence',
        before: [
          this.evidenceEvent(row, actor.id, {
            description: input.description,
            proofUrl: input.proofUrl,
            source: input.source ?? 'api',
          }),
        ],
      });
      return { evidence: events[0]!, instance, advanced };
    });
  }

  /** A `verification_evidence` event of the current state visit (the URL is stored, never fetched). */
  evidenceEvent(
    row: repo.InstanceRow,
    actorId: number,
    e: { description: string; proofUrl: string | null; source: string; [k: string]: unknown },
  ): PendingEvent {
    return { row, actorId, eventType: 'verification_evidence', eventText: e.description, metadata: e };
  }

  /** After an approval or evidence: bumps the version, then takes the state's guarded exit when
   * its guard now holds (auto-advance, one hop). `known`: the kind of record the write just
   * recorded in this visit; `before`: the write's own events, recorded first in the same insert
   * (returned first in `events`). */
  async touchAndAdvance(
    trx: Executor,
    afterCommit: AfterCommit,
    row: repo.InstanceRow,
    actor: WorkflowActor,
    opts: { known: keyof VisitRecords; before: PendingEvent[] },
  ): Promise<{ instance: WorkflowInstance; advanced: Advanced; events: TimelineEvent[] }> {
    const def = await this.definitionOf(row, trx);
    const records = await this.guardRecords(trx, row, def, opts.known);
    const hop = autoAdvance(def, row.state, records);
    if (hop) {
      const moved = await this.entry.move(
        trx,
        afterCommit,
        row,
        def,
        hop.to,
        actor,
        { auto: true, suggestionId: null },
        opts.before,
      );
      return {
        instance: await this.viewWith(trx, moved.row, NEW_VISIT),
        advanced: hop,
        events: moved.events,
      };
    }
    // Independent statements, sent together (the connection is pipelined).
    const [next, events] = await together([
      repo.updateInstance(trx, row.id, { updated_by_user_id: actor.id }),
      this.entry.recordAll(trx, afterCommit, opts.before),
    ]);
    return { instance: await this.viewWith(trx, next, records), advanced: hop, events };
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
