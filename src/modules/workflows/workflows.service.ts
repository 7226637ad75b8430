// Workflow state machines (spec "State machine instance", "States and transitions"; contract
// "Workflows"): definitions, instances, transitions, approvals and evidence. Every write locks the
// instance row, checks `expectedVersion`, asks the XState machine with the approvals and evidence
// of the current state visit, and writes its timeline events in the same transaction (broadcast
// to the instance's observer after commit), as one WorkflowWrite (workflows.write.ts; a state's
// entry actions: workflows.actions.ts).
import { randomUUID } from 'node:crypto';
import { type Db, type Executor, transaction } from '../../platform/db/database.js';
import { AppError, validationFailed } from '../../platform/http/problem.js';
import type { TimelineEvent } from '../timeline/index.js';
import { InstanceAccess } from './workflows.access.js';
import { DefinitionCatalog } from './workflows.catalog.js';
import {
  WORKFLOW_DEFINITIONS,
  WORKFLOW_PROTOCOLS,
  type WorkflowDefinition,
} from './workflows.definitions.js';
import * as repo from './workflows.repository.js';
import { decideTransition, definitionProblems, type TransitionDecision } from './workflows.rules.js';
import type {
  Advanced,
  Approval,
  CreateInstanceInput,
  ListInstancesQuery,
  WorkflowInstance,
} from './workflows.schemas.js';
import type { WorkflowActor, WorkflowPorts, WorkflowsDeps } from './workflows.types.js';
import { guardRecords, InstanceViews, NEW_VISIT, toApproval, toView } from './workflows.views.js';
import { WorkflowWriter } from './workflows.write.js';

export { toApproval, toView };

/** An instance as one read found it (`readForCreator`); only the workflows module looks inside. */
export interface InstanceRead {
  readonly creatorId: number | null;
  readonly row: repo.InstanceRow;
}

/** What the module's other services (tasks, runs, the orchestrator) use of its instances: built
 * once, here, and handed to them (createWorkflowExecution). */
export interface InstanceParts {
  db: Db;
  definitions: DefinitionCatalog;
  access: InstanceAccess;
  views: InstanceViews;
  writes: WorkflowWriter;
  /** Whether a user id is a character (task assignment). */
  isCharacter: WorkflowsDeps['isCharacter'];
}

export class WorkflowsService {
  private ports: WorkflowPorts = {};
  readonly instances: InstanceParts;

  constructor(private readonly deps: WorkflowsDeps) {
    const definitions = new DefinitionCatalog(deps.db);
    const access = new InstanceAccess(deps.timeline);
    this.instances = {
      db: deps.db,
      definitions,
      access,
      views: new InstanceViews(deps.timeline, definitions),
      writes: new WorkflowWriter(deps, definitions, access, () => this.ports),
      isCharacter: deps.isCharacter,
    };
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
    for (const def of WORKFLOW_DEFINITIONS) {
      const problems = definitionProblems(def);
      if (problems.length) throw new Error(`definition ${def.machineId}: ${problems.join('; ')}`);
    }
    // One statement for them all (every start runs this; only the first inserts).
    const inserted = new Set(await repo.insertDefinitionsIfAbsent(this.db, [...WORKFLOW_DEFINITIONS]));
    return { inserted: WORKFLOW_DEFINITIONS.map((d) => d.machineId).filter((id) => inserted.has(id)) };
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

  listDefinitions(executor: Executor = this.db): Promise<WorkflowDefinition[]> {
    return this.instances.definitions.list(executor);
  }

  /** A stored definition (cached: a definition never changes under its id), or undefined. */
  findDefinition(machineId: string, executor: Executor = this.db): Promise<WorkflowDefinition | undefined> {
    return this.instances.definitions.find(machineId, executor);
  }

  getDefinition(machineId: string): Promise<WorkflowDefinition> {
    return this.instances.definitions.get(machineId);
  }

  // ---- reads -------------------------------------------------------------------------------

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

  async get(actor: WorkflowActor, id: string): Promise<WorkflowInstance> {
    const { access, views } = this.instances;
    return views.view(this.db, await access.participantInstance(this.db, id, actor));
  }

  /** Newest first; non-admins see the instances they created. */
  async list(actor: WorkflowActor, q: ListInstancesQuery) {
    const { rows, total } = await repo.listInstances(this.db, {
      ...q,
      createdByUserId: actor.admin ? undefined : actor.id,
    });
    const instances = await this.instances.views.views(this.db, rows);
    return { instances, total, limit: q.limit, offset: q.offset };
  }

  async timeline(actor: WorkflowActor, id: string, limit: number): Promise<TimelineEvent[]> {
    await this.instances.access.participantInstance(this.db, id, actor);
    return this.deps.timeline.listForStateMachines({ stateMachineInstanceIds: [id], limit });
  }

  async approvals(actor: WorkflowActor, id: string): Promise<Approval[]> {
    await this.instances.access.participantInstance(this.db, id, actor);
    return (await repo.listApprovals(this.db, id)).map(toApproval);
  }

  // ---- writes ------------------------------------------------------------------------------

  async create(actor: WorkflowActor, input: CreateInstanceInput): Promise<WorkflowInstance> {
    const def = await this.definitionToCreate(actor, input);
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const { timeline } = this.deps;
      const registryId = input.registryInstanceId;
      if (registryId !== undefined && !(await timeline.getInstance(registryId, trx)))
        throw validationFailed([
          { path: 'registryInstanceId', message: `no registry instance ${registryId}` },
        ]);
      const row = await repo.insertInstance(trx, {
        machineId: def.machineId,
        protocolId: def.protocolId,
        state: def.initial,
        context: input.context ?? {},
        channelId: input.channelId ?? null,
        guildId: input.guildId ?? null,
        userId: actor.id,
        registryInstanceId: registryId ?? null,
      });
      if (row.registry_instance_id !== null)
        await timeline.linkStateMachine(trx, row.registry_instance_id, row.id);
      const w = await this.instances.writes.begin(uow, row, actor);
      const title = typeof row.context.title === 'string' ? ` "${row.context.title}"` : '';
      w.record({
        eventType: 'workflow_instance_created',
        eventText: `Workflow${title} (${def.machineId}) created in ${row.state}`,
        metadata: { protocolId: row.protocol_id },
      });
      await w.enter();
      const { row: entered } = await w.end();
      return toView(entered, def, NEW_VISIT);
    });
  }

  /** The definition an instance is created with; 422 for an unknown one or another protocol, 403
   * for a non-admin linking a registry instance. */
  private async definitionToCreate(actor: WorkflowActor, input: CreateInstanceInput) {
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
    return def;
  }

  async transition(
    actor: WorkflowActor,
    id: string,
    input: { targetState: string; expectedVersion?: number | undefined; suggestionId?: string | null },
  ): Promise<WorkflowInstance> {
    return this.instances.writes.toInstance(actor, id, {}, async (w) => {
      w.checkVersion(input.expectedVersion);
      const { def, row } = w;
      // Only a guarded exit reads the visit's records (decideTransition).
      const exit = def.transitions.find((t) => t.from === row.state && t.to === input.targetState);
      const records = exit?.guard ? await guardRecords(this.deps.timeline, w.trx, row, def) : NEW_VISIT;
      const archived = row.archived_at !== null;
      const decision = decideTransition(def, row.state, input.targetState, records, archived);
      if (decision.kind !== 'take') throw refusal(decision, def, archived);
      await w.move(decision.to, { auto: false, suggestionId: input.suggestionId ?? null });
      const { row: moved } = await w.end();
      return toView(moved, def, NEW_VISIT);
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
    return this.instances.writes.toInstance(actor, id, {}, async (w) => {
      w.checkWritable(input.expectedVersion);
      const { def, row } = w;
      if (!def.transitions.some((t) => t.from === input.to && t.to === row.state) || input.visit < 1)
        throw new AppError('invalid_transition', `${def.machineId} never moves ${input.to} → ${row.state}`, {
          from: row.state,
          to: input.to,
          allowed: [],
        });
      w.returnTo(input.to, input.visit, input.suggestionId);
      const { row: back } = await w.end();
      return this.instances.views.view(w.trx, back);
    });
  }

  async approve(
    actor: WorkflowActor,
    id: string,
    input: { note?: string | undefined; expectedVersion?: number | undefined },
  ): Promise<{ approval: Approval; instance: WorkflowInstance; advanced: Advanced }> {
    return this.instances.writes.toInstance(actor, id, { approver: true }, async (w) => {
      w.checkWritable(input.expectedVersion);
      const { row } = w;
      // The approval's id is made here: its event names it, so the insert need not be answered
      // before the advance's statements are made.
      const approvalId = randomUUID();
      const note = input.note ?? null;
      const inserted = w.send(
        repo.insertApproval(w.trx, {
          id: approvalId,
          instanceId: id,
          state: row.state,
          stateVisit: row.state_visit,
          userId: actor.id,
          name: actor.name,
          note,
        }),
      );
      w.record({
        eventType: 'workflow_approval',
        eventText: `${actor.name} approved ${row.state}`,
        metadata: { approvalId, note },
      });
      const { advanced, records } = await w.advanceIfGuardHolds('approvals');
      const { row: written } = await w.end();
      return { approval: toApproval(await inserted), instance: toView(written, w.def, records), advanced };
    });
  }

  async evidence(
    actor: WorkflowActor,
    id: string,
    input: { description: string; proofUrl: string; expectedVersion?: number | undefined; source?: string },
  ): Promise<{ evidence: TimelineEvent; instance: WorkflowInstance; advanced: Advanced }> {
    return this.instances.writes.toInstance(actor, id, {}, async (w) => {
      w.checkWritable(input.expectedVersion);
      w.recordEvidence({
        description: input.description,
        proofUrl: input.proofUrl,
        source: input.source ?? 'api',
      });
      const { advanced, records } = await w.advanceIfGuardHolds('evidence');
      const { row, events } = await w.end();
      return { evidence: events[0]!, instance: toView(row, w.def, records), advanced };
    });
  }
}

/** The 409 of a transition the machine refuses. */
function refusal(
  d: Exclude<TransitionDecision, { kind: 'take' }>,
  def: WorkflowDefinition,
  archived: boolean,
): AppError {
  if (d.kind === 'guard_not_satisfied')
    return new AppError('guard_not_satisfied', d.detail, { guard: d.guard, missing: d.missing });
  return new AppError(
    'invalid_transition',
    d.allowed.length
      ? `${def.machineId} has no transition ${d.from} → ${d.to}; from ${d.from} it may go to ${d.allowed.join(', ')}`
      : `${def.machineId} has no transition out of ${d.from}${archived ? ' (the instance is completed)' : ''}`,
    { from: d.from, to: d.to, allowed: d.allowed },
  );
}
