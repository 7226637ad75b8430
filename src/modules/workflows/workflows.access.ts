// Who may act on a workflow instance: participants are the creator, admins and the owner of the
// instance's observer (its linked registry instance's observer, else the root); approvers are
// admins and that owner. Anyone else is told the instance does not exist (404).
import type { Executor } from '../../platform/db/database.js';
import { AppError, notFound } from '../../platform/http/problem.js';
import type { TimelineService } from '../timeline/index.js';
import * as repo from './workflows.repository.js';
import type { WorkflowActor } from './workflows.types.js';

export type Access = { participant: boolean; approver: boolean };

export interface ParticipantOptions {
  /** Row-locks the instance (a write to it or anything of it). */
  lock?: boolean;
  /** 403 for a participant who may not approve. */
  approver?: boolean;
  /** What the 404 names: the resource the caller was asked for (a task, an artifact, a run). */
  missing?: string;
}

export class InstanceAccess {
  constructor(private readonly timeline: TimelineService) {}

  /** The instance a participant names; 404 for anyone else. */
  async participantInstance(
    executor: Executor,
    id: string,
    actor: WorkflowActor,
    opts: ParticipantOptions = {},
  ): Promise<repo.InstanceRow> {
    if (opts.approver) return (await this.participantAccess(executor, id, actor, opts)).row;
    const row = await repo.findInstance(executor, id, opts.lock ?? false);
    if (!row) throw notFound(opts.missing ?? 'workflow instance');
    // Admins and the creator take part whoever owns the observer: no need to read it.
    if (actor.admin || row.created_by_user_id === actor.id) return row;
    if (!(await this.accessOf(row, actor, executor)).participant)
      throw notFound(opts.missing ?? 'workflow instance');
    return row;
  }

  /** Like participantInstance, with what the actor may do there (approve or not). */
  async participantAccess(
    executor: Executor,
    id: string,
    actor: WorkflowActor,
    opts: ParticipantOptions = {},
  ): Promise<{ row: repo.InstanceRow; access: Access }> {
    const row = await repo.findInstance(executor, id, opts.lock ?? false);
    if (!row) throw notFound(opts.missing ?? 'workflow instance');
    return { row, access: await this.accessTo(executor, row, actor, opts) };
  }

  /** What the actor may do at an instance already read: 404 unless a participant; 403 for anyone
   * but an approver when `approver`. */
  async accessTo(
    executor: Executor,
    row: repo.InstanceRow,
    actor: WorkflowActor,
    opts: ParticipantOptions = {},
  ): Promise<Access> {
    const access = await this.accessOf(row, actor, executor);
    if (!access.participant) throw notFound(opts.missing ?? 'workflow instance');
    if (opts.approver && !access.approver)
      throw new AppError(
        'forbidden',
        "Only an administrator or the owner of the instance's observer may approve",
      );
    return access;
  }

  private async accessOf(row: repo.InstanceRow, actor: WorkflowActor, executor: Executor): Promise<Access> {
    if (actor.admin) return { participant: true, approver: true };
    const approver = (await this.observerOwnerId(row, executor)) === actor.id;
    return { participant: approver || row.created_by_user_id === actor.id, approver };
  }

  /** The owner of the instance's observer: its linked registry instance's observer, else the root. */
  private async observerOwnerId(row: repo.InstanceRow, executor: Executor): Promise<number | null> {
    const { timeline } = this;
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
}
