// One write to a workflow instance: the workflow verbs (move, return, enter, start a run, advance)
// on the unit of work (unit-of-work.ts) of who acts on the instance row and its definition. Its
// verbs make their statements at once, without waiting for their answers (the transaction runs
// them one after another, in the order made), and collect the write's timeline events; `end` adds
// the events to the unit and flushes it (one insert, with what its subscribers add: the
// suggestions' jobs), and waits for every statement made.
import { randomUUID } from 'node:crypto';
import { together, transaction, type Trx } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { AppError } from '../../platform/http/problem.js';
import type { TimelineEvent } from '../timeline/index.js';
import type { InstanceAccess } from './workflows.access.js';
import { readForAction, type EntryWrite } from './workflows.actions.js';
import type { DefinitionCatalog } from './workflows.catalog.js';
import type { WorkflowDefinition } from './workflows.definitions.js';
import { recordEvents, type PendingEvent } from './workflows.events.js';
import * as repo from './workflows.repository.js';
import { autoAdvance, stateOf, type VisitRecords } from './workflows.rules.js';
import * as runs from './workflows.runs.repository.js';
import type { Advanced } from './workflows.schemas.js';
import type { RunTrigger } from './workflows.tables.js';
import type { WorkflowActor, WorkflowPorts, WorkflowsDeps } from './workflows.types.js';
import { guardRecords, NEW_VISIT } from './workflows.views.js';

interface WriteContext {
  uow: UnitOfWork;
  deps: WorkflowsDeps;
  ports: WorkflowPorts;
}

/** Why a state is entered: by a transition request (`suggestionId`: the suggestion that asked
 * for it), or automatically once a guard holds. */
export interface TransitionCause {
  auto: boolean;
  suggestionId: string | null;
}

export interface WriteEvent {
  eventType: string;
  eventText: string;
  metadata?: Record<string, unknown>;
  /** Who the event names (default: the write's actor; null: the orchestrator). */
  actorId?: number | null;
}

export class WorkflowWrite implements EntryWrite {
  private readonly events: PendingEvent[] = [];
  /** Statements sent and not yet waited for, in the order sent. */
  private readonly sent: Promise<unknown>[] = [];
  /** The write's last update of the instance's row (its answer is the row the write leaves). */
  private lastUpdate: Promise<repo.InstanceRow> | undefined;
  private current: repo.InstanceRow;
  private ended = false;

  constructor(
    private readonly context: WriteContext,
    row: repo.InstanceRow,
    readonly def: WorkflowDefinition,
    readonly actor: WorkflowActor | null,
  ) {
    this.current = row;
  }

  get uow(): UnitOfWork {
    return this.context.uow;
  }
  get trx(): Trx {
    return this.context.uow.trx;
  }
  get deps(): WorkflowsDeps {
    return this.context.deps;
  }
  get ports(): WorkflowPorts {
    return this.context.ports;
  }
  /** The instance as the write's events name it: after `move`, its new state and visit, known
   * before the update answers (its version and times come with `end`'s row). */
  get row(): repo.InstanceRow {
    return this.current;
  }
  /** Whether the write collected something `end` has not sent. */
  get open(): boolean {
    return !this.ended && (this.sent.length > 0 || this.events.length > 0);
  }

  /** A stale `expectedVersion` is 409 `conflict` with the instance's version. */
  checkVersion(expected: number | undefined): void {
    const { version } = this.current;
    if (expected !== undefined && expected !== version)
      throw new AppError(
        'conflict',
        `The instance is at version ${version}, not ${expected}; read it again and retry`,
        { version },
      );
  }

  /** A write to a completed instance, its tasks or artifacts is 409 `conflict`, as is a stale
   * version. */
  checkWritable(expectedVersion?: number): void {
    if (this.current.archived_at !== null)
      throw new AppError('conflict', 'The workflow instance is completed and archived; it is read-only', {
        version: this.current.version,
      });
    this.checkVersion(expectedVersion);
  }

  /** Sends a statement of this write and answers it, without waiting for it. */
  send<T>(statement: Promise<T>): Promise<T> {
    if (this.ended) throw new Error('the workflow write has ended');
    // `end` waits for every statement sent and reports the first that failed (a later one fails
    // only because the transaction is aborted); until then a failure must not surface as an
    // unhandled rejection.
    statement.catch(() => undefined);
    this.sent.push(statement);
    return statement;
  }

  private update(statement: Promise<repo.InstanceRow>): void {
    this.lastUpdate = this.send(statement);
  }

  /** An event of this write about the instance as it is now (recorded when the write ends). */
  record(event: WriteEvent): void {
    if (this.ended) throw new Error('the workflow write has ended');
    const { actorId = this.actor?.id ?? null, ...rest } = event;
    this.events.push({ row: this.current, actorId, ...rest });
  }

  /** A `verification_evidence` event of the current state visit (the URL is stored, never fetched). */
  recordEvidence(e: { description: string; proofUrl: string | null; source: string; [k: string]: unknown }) {
    this.record({ eventType: 'verification_evidence', eventText: e.description, metadata: e });
  }

  private actorId(): number {
    if (!this.actor) throw new Error('only an actor changes the instance itself');
    return this.actor.id;
  }

  /** Bumps the instance's version: the write changed something of it other than its state. */
  touch(): void {
    this.update(repo.updateInstance(this.trx, this.current.id, { updated_by_user_id: this.actorId() }));
  }

  /** Enters `to` (a new visit; the version bumps once), records the transition, then runs the
   * state's entry (`enter`). */
  async move(to: string, cause: TransitionCause): Promise<void> {
    const from = this.current;
    const { terminal } = stateOf(this.def, to)!;
    this.update(repo.enterState(this.trx, from.id, to, this.actorId(), terminal));
    this.current = { ...from, state: to, state_visit: from.state_visit + 1 };
    this.record({
      eventType: 'workflow_transition',
      eventText: `${from.state} → ${to}${cause.auto ? ' (automatic)' : ''}`,
      metadata: { from: from.state, to, auto: cause.auto, undo: false, suggestionId: cause.suggestionId },
    });
    await this.enter();
  }

  /** Back to `state` and its earlier visit `visit` (an undone transition; the version bumps): no
   * entry runs. */
  returnTo(state: string, visit: number, suggestionId: string | null): void {
    const from = this.current;
    this.update(repo.restoreState(this.trx, from.id, state, visit, this.actorId()));
    this.current = { ...from, state, state_visit: visit };
    this.record({
      eventType: 'workflow_transition',
      eventText: `${from.state} → ${state} (undone)`,
      metadata: { from: from.state, to: state, auto: false, undo: true, suggestionId },
    });
  }

  /** The current state's entry (a transition's, or a new instance's initial state): its checklist,
   * its actions in order, and completion when it is terminal. What the actions read goes out with
   * the statements already sent and is waited for with them; without actions nothing is waited
   * for here. */
  async enter(): Promise<void> {
    const state = stateOf(this.def, this.current.state)!;
    this.record({
      eventType: 'workflow_checklist',
      eventText: state.checklist.length
        ? `Checklist for ${state.name}: ${state.checklist.join('; ')}`
        : `No checklist for ${state.name}`,
      metadata: { items: state.checklist },
    });
    if (state.actions.length > 0) {
      const actions = await this.answered(state.actions.map((name) => readForAction(name, this)));
      for (const act of actions) await act();
    }
    if (state.terminal) await this.complete();
  }

  /** Completion: the instance archived (its entry's update did it), its active run canceled; the
   * event names the archiving time and the runs canceled, so it waits for their answers. */
  private async complete(): Promise<void> {
    const canceled = this.send(runs.cancelActiveRuns(this.trx, this.current.id));
    if (this.current.active_run_id !== null) this.clearActiveRun();
    await this.answered([]);
    const row = await this.lastUpdate!;
    this.current = row;
    this.record({
      eventType: 'workflow_completed',
      eventText: 'Workflow completed and archived',
      metadata: {
        archivedAt: row.archived_at?.toISOString() ?? null,
        canceledRunIds: (await canceled).map((r) => r.id),
      },
    });
  }

  /** Creates a queued run and makes it the instance's active run; after commit, the run goes to
   * the executor (503 without one). The run's id is made here, so the instance's update names it
   * without waiting for the insert. The caller checked that no run is active; the partial unique
   * index decides a race (the insert fails). */
  startRun(trigger: RunTrigger, taskIds: string[]): { id: string; inserted: Promise<runs.RunRow> } {
    const executor = this.ports.runExecutor;
    if (!executor)
      throw new AppError('service_unavailable', 'No orchestrator runs workflow tasks on this node');
    const id = randomUUID();
    const instanceId = this.current.id;
    const inserted = this.send(
      runs.insertRun(this.trx, { id, instanceId, trigger, taskIds, userId: this.actor?.id ?? null }),
    );
    this.update(repo.setActiveRun(this.trx, instanceId, id));
    this.current = { ...this.current, active_run_id: id };
    this.uow.afterCommit(() => executor({ id, instanceId, trigger, taskIds }));
    return { id, inserted };
  }

  /** The instance has no active run any more (no version bump: the run is what changed). */
  clearActiveRun(): void {
    this.update(repo.setActiveRun(this.trx, this.current.id, null));
    this.current = { ...this.current, active_run_id: null };
  }

  /** After an approval or evidence (`justRecorded`: its kind): takes the state's guarded exit when
   * its guard now holds (auto-advance, one hop), else only bumps the version. Answers the exit
   * taken (null: none) and the visit records the instance's view shows. */
  async advanceIfGuardHolds(
    justRecorded: keyof VisitRecords,
  ): Promise<{ advanced: Advanced; records: VisitRecords }> {
    const records = await guardRecords(this.deps.timeline, this.trx, this.current, this.def, justRecorded);
    const hop = autoAdvance(this.def, this.current.state, records);
    if (!hop) {
      this.touch();
      return { advanced: null, records };
    }
    await this.move(hop.to, { auto: true, suggestionId: null });
    return { advanced: hop, records: NEW_VISIT };
  }

  /** Adds the collected events to the unit and flushes it (one insert, with what its subscribers
   * add), waits for every statement of the write, and answers the instance as the write's last
   * update left it and the events, in the order recorded. */
  async end(): Promise<{ row: repo.InstanceRow; events: TimelineEvent[] }> {
    const { uow, ports } = this.context;
    const recording = recordEvents({ uow, ports, timeline: this.deps.timeline }, this.events);
    const [, events] = await together([together(this.sent), recording]);
    this.ended = true;
    const row = this.lastUpdate ? await this.lastUpdate : this.current;
    return { row, events };
  }

  /** Waits for every statement sent so far, then for `reads` (sent after them), and answers
   * these; the first failure in the order sent is the one reported. */
  private async answered<T>(reads: Promise<T>[]): Promise<T[]> {
    const [, values] = await together([together(this.sent), together(reads)]);
    return values;
  }
}

/** Begins workflow writes: on an instance the caller locked in its transaction, or in a
 * transaction of their own. */
export class WorkflowWriter {
  constructor(
    private readonly deps: WorkflowsDeps,
    private readonly definitions: DefinitionCatalog,
    private readonly access: InstanceAccess,
    private readonly ports: () => WorkflowPorts,
  ) {}

  /** A write to an instance the caller read in its transaction (its row lock held, for a write
   * to the instance itself). */
  async begin(uow: UnitOfWork, row: repo.InstanceRow, actor: WorkflowActor | null): Promise<WorkflowWrite> {
    const def = await this.definitions.of(row, uow.trx);
    return new WorkflowWrite({ uow, deps: this.deps, ports: this.ports() }, row, def, actor);
  }

  /** `work` as a write in a transaction of its own to the instance a participant names,
   * row-locked (404 for anyone else; `approver`: 403 for a participant who may not approve).
   * `work` ends the write. */
  toInstance<T>(
    actor: WorkflowActor,
    id: string,
    opts: { approver?: boolean },
    work: (w: WorkflowWrite) => Promise<T>,
  ): Promise<T> {
    return transaction(this.deps.db, async (uow) => {
      const row = await this.access.participantInstance(uow.trx, id, actor, { ...opts, lock: true });
      const w = await this.begin(uow, row, actor);
      const result = await work(w);
      if (w.open) throw new Error('a workflow write returned without ending');
      return result;
    });
  }
}
