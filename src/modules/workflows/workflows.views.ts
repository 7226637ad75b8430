// Instances and approvals as the API shows them. An instance's `allowedTransitions` depend on the
// approvals and evidence of its current state visit, read here: for one instance, only the count
// its state's guarded exit reads (rules `countsRead`).
import type { Executor } from '../../platform/db/database.js';
import type { TimelineService } from '../timeline/index.js';
import type { DefinitionCatalog } from './workflows.catalog.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import * as repo from './workflows.repository.js';
import { allowedTransitions, countsRead, stateOf, type VisitRecords } from './workflows.rules.js';
import type { Approval, WorkflowInstance } from './workflows.schemas.js';

type EvidenceReader = Pick<TimelineService, 'listForStateMachines'>;

/** The records of a state visit that just began. */
export const NEW_VISIT: VisitRecords = Object.freeze({ approvals: 0, evidence: 0 });

const iso = (d: Date) => d.toISOString();

/** The approvals and evidence of each instance's current state visit (`only`: that count alone,
 * the other left 0). */
export async function visitRecords(
  timeline: EvidenceReader,
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
      : timeline.listForStateMachines(
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

/** What the decisions and the view of one instance read of its visit's records: the count of its
 * state's guarded exit alone (nothing else reads the other). `justRecorded`: a record of that kind
 * was just written in this visit, so its count is at least one (no read). */
export async function guardRecords(
  timeline: EvidenceReader,
  executor: Executor,
  row: repo.InstanceRow,
  def: WorkflowDefinition,
  justRecorded?: keyof VisitRecords,
): Promise<VisitRecords> {
  const kind = countsRead(def, row.state, row.archived_at !== null);
  if (kind === null) return NEW_VISIT;
  if (kind === justRecorded) return { ...NEW_VISIT, [kind]: 1 };
  return (await visitRecords(timeline, executor, [row], kind)).get(row.id)!;
}

export class InstanceViews {
  constructor(
    private readonly timeline: EvidenceReader,
    private readonly definitions: DefinitionCatalog,
  ) {}

  async view(executor: Executor, row: repo.InstanceRow): Promise<WorkflowInstance> {
    const def = await this.definitions.of(row, executor);
    return toView(row, def, await guardRecords(this.timeline, executor, row, def));
  }

  async views(executor: Executor, rows: repo.InstanceRow[]): Promise<WorkflowInstance[]> {
    const records = await visitRecords(this.timeline, executor, rows);
    const out: WorkflowInstance[] = [];
    for (const row of rows)
      out.push(toView(row, await this.definitions.of(row, executor), records.get(row.id)!));
    return out;
  }
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
