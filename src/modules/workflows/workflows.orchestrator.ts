// The orchestrator (contract "Tasks, artifacts, orchestrator"): executes one run, as the job asks.
//  1. Seeds tasks when the instance has none: `context.tasks`, else one structured model call
//     (offline, failed or unparseable: the flow's three fixed tasks).
//  2. Gives each unassigned task the NPC whose `metadata.specialties` holds its specialty (fewest
//     tasks here, then lowest id), else the assistant's own user.
//  3. With `runTasks`, runs the pending tasks (a rerun: its one task), `concurrency` at a time: each
//     is claimed once in the database (workflow_task_runs) with a draft artifact (the first
//     `concurrency` together, in one transaction), then one model call (persona, merged routing +
//     workflow protocol, task, context), then the artifact is ready and the task completed; a
//     failed call leaves the artifact draft and blocks that task only.
// A worker holds the run by a lease it renews; a run whose worker died (lease lapsed) or stopped
// (lease released) is taken up by the job's retry or the sweep's new job, and goes on from its
// claims: a finished task is never called again, an interrupted one finishes its own artifact.
// The model calls: workflows.orchestrator.calls.ts; claims and finishes:
// workflows.orchestrator.claims.ts (bench/workflows.ts times `seed`, `claim` and `endTasks` by
// name).
import type { Logger } from 'pino';
import { batchedWrites } from '../../platform/db/batched.js';
import { type Db, transaction } from '../../platform/db/database.js';
import { toProblem } from '../../platform/http/problem.js';
import {
  chooseSeeds,
  RunCalls,
  RunSpecialists,
  type AnsweredCall,
  type Call,
  type CallDeps,
  type Claimed,
  type SpecialistPersona,
  type StartCalls,
} from './workflows.orchestrator.calls.js';
import {
  claimTogether,
  ClaimTaken,
  finishTogether,
  TaskFinishedElsewhere,
  writeClaims,
  type ClaimRequest,
} from './workflows.orchestrator.claims.js';
import { pickPersona } from './workflows.orchestrator.rules.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import type { InstanceParts } from './workflows.service.js';
import type { WorkflowTasksService } from './workflows.tasks.js';
import type { WriteEvent } from './workflows.write.js';

export type { SpecialistPersona };

export interface OrchestratorDeps extends CallDeps {
  db: Db;
  instances: InstanceParts;
  tasks: Pick<WorkflowTasksService, 'createTasks'>;
  /** NPCs with their `metadata.specialties`, and the name and description a task speaks as. */
  specialists: () => Promise<SpecialistPersona[]>;
  log: Logger;
}

export interface OrchestratorOptions {
  /** How long a worker holds a run without renewing (renewed every third of it). */
  leaseSeconds: number;
}

type Instance = repo.InstanceRow;
type RunRow = runs.FullRunRow;
interface TakenRun {
  run: RunRow;
  instance: Instance;
}

class RunStopped extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'RunStopped';
  }
}

export class WorkflowOrchestrator {
  private readonly active = new Map<string, { ac: AbortController; done: Promise<unknown> }>();
  private stopping = false;

  constructor(
    private readonly d: OrchestratorDeps,
    private readonly opts: OrchestratorOptions,
  ) {}

  private get db() {
    return this.d.db;
  }

  /** The job's handler. Returns when the run ended, was canceled, or another worker holds it;
   * throws when this worker stopped before the end (the job is retried) or on an error before
   * the `final` attempt (after it, the run is failed with the error). */
  async execute(runId: string, attempt: { final: boolean }): Promise<void> {
    if (this.stopping) throw new RunStopped('the orchestrator is stopping');
    const taken = await this.take(runId);
    if (!taken) return;
    const ac = new AbortController();
    const work = this.work(taken, ac.signal);
    // `stop` waits for the run's work to settle, whichever way it ends; the job awaits it below.
    this.active.set(runId, { ac, done: work.catch(() => undefined) });
    const renew = setInterval(
      () =>
        void runs.renewLease(this.db, runId, this.opts.leaseSeconds).then(
          (r) => {
            if (!r) ac.abort(new RunStopped('the run was canceled'));
          },
          (err: unknown) => this.d.log.warn({ err, runId }, 'run lease not renewed'),
        ),
      (this.opts.leaseSeconds * 1000) / 3,
    );
    renew.unref();
    try {
      await work;
    } catch (err) {
      if (ac.signal.aborted && !this.stopping) return; // canceled (the instance completed)
      // Best effort: a lease not released lapses, and the sweep gives the run a new job then.
      await runs.releaseLease(this.db, runId).catch(() => undefined);
      if (this.stopping || !attempt.final) throw err;
      await this.failRun(taken.run, err);
    } finally {
      clearInterval(renew);
      this.active.delete(runId);
    }
  }

  /** Stops every run this node works on (their leases released, their jobs retried elsewhere or
   * after a restart); called before the job queue stops. */
  async stop(): Promise<void> {
    this.stopping = true;
    const all = [...this.active.values()];
    for (const a of all) a.ac.abort(new RunStopped('the orchestrator is stopping'));
    await Promise.all(all.map((a) => a.done));
  }

  // ---- the run ---------------------------------------------------------------------------------

  /** Takes the run (lease); records `workflow_run_started` the first time. */
  private take(runId: string): Promise<TakenRun | null> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const run = await runs.findRun(trx, runId, true);
      if (!run || (run.status !== 'queued' && run.status !== 'running')) return null;
      const leased = await runs.takeRun(trx, runId, this.opts.leaseSeconds);
      if (!leased) return null;
      const instance = (await repo.findInstance(trx, run.instance_id))!;
      if (run.started_at === null) {
        const w = await this.d.instances.writes.begin(uow, instance, null);
        w.record({
          eventType: 'workflow_run_started',
          eventText: `Orchestrator run started (${run.trigger})`,
          metadata: { runId, trigger: run.trigger, runTasks: run.run_tasks, concurrency: run.concurrency },
          actorId: run.created_by_user_id,
        });
        await w.end();
      }
      return { run: leased, instance };
    });
  }

  private async work(taken: TakenRun, signal: AbortSignal): Promise<void> {
    const { instance } = taken;
    const specialists = new RunSpecialists(this.d.specialists);
    const calls = new RunCalls(this.d, instance, specialists, taken.run.run_tasks);
    const { run, seededWave } = await this.prepareTasks(taken, specialists, calls, signal);
    if (run.run_tasks && run.task_ids.length > 0)
      await this.runTasks(run, instance, calls, seededWave, signal);
    if (signal.aborted) throw signal.reason;
    await this.finishRun(run);
  }

  /** Steps 1 and 2: a rerun's task assigned; else, for a run that names no tasks, tasks seeded
   * (with the calls of the first `concurrency` of them, when the seeding claimed them) or, when the
   * instance had some, assigned and, for a run that runs them, its pending assigned tasks set. */
  private async prepareTasks(
    { run, instance }: TakenRun,
    specialists: RunSpecialists,
    calls: RunCalls,
    signal: AbortSignal,
  ): Promise<{ run: RunRow; seededWave: Call[] | null }> {
    if (run.trigger === 'rerun') {
      await this.assign(instance, run.task_ids, specialists);
      return { run, seededWave: null };
    }
    if (run.task_ids.length > 0) return { run, seededWave: null };
    // Tasks the seeding created are the instance's only ones, pending and assigned: nothing is
    // left to assign or to read back, and the seeding claims the first of them.
    const seeded = await calls.claimAndCall(
      (start) => this.seed(run, instance, specialists, signal, start),
      signal,
    );
    if (seeded.result) return { run: seeded.result, seededWave: seeded.calls };
    await this.assign(instance, null, specialists);
    if (!run.run_tasks) return { run, seededWave: null };
    const pending = (await repo.listTasks(this.db, instance.id, 'pending'))
      .filter((t) => t.assigned_persona_id !== null)
      .map((t) => t.id);
    return { run: await runs.setRunTasks(this.db, run.id, pending), seededWave: null };
  }

  /** Step 3: the run's tasks, `concurrency` at a time. The first `concurrency` are claimed in one
   * transaction (the seeding's, when it created them: `seededWave`; else one of their own), not
   * in as many at once, each holding a connection; each later one is claimed when a worker is
   * free. The finishes that come together (a wave's calls answered at once) are written
   * together. */
  private async runTasks(
    run: RunRow,
    instance: Instance,
    calls: RunCalls,
    seededWave: Call[] | null,
    signal: AbortSignal,
  ): Promise<void> {
    const queue = [...run.task_ids];
    const first = queue.splice(0, run.concurrency);
    const claimCalls = async (taskIds: string[]) => {
      const started = performance.now();
      const claimed = await calls.claimAndCall(
        (start) => this.claim({ run, instance, started, start }, taskIds),
        signal,
      );
      return claimed.calls;
    };
    const wave = seededWave ?? (await claimCalls(first));
    const finish = batchedWrites((answered: AnsweredCall[]) => this.endTasks(run, instance, answered));
    const finished = async (c: Call) => {
      const outcome = await c.outcome;
      if (signal.aborted) throw signal.reason;
      await finish({ claimed: c.claimed, started: c.started, ...outcome });
    };
    const worker = async (claimed: Call | undefined) => {
      if (claimed) await finished(claimed);
      for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
        if (signal.aborted) throw signal.reason;
        const [next] = await claimCalls([id]);
        if (next) await finished(next);
      }
    };
    const workers = Math.min(run.concurrency, run.task_ids.length);
    await Promise.all(Array.from({ length: workers }, (_, i) => worker(wave[i])));
  }

  /** Step 1: tasks for an instance with none, each assigned; for a run that runs them, in the same
   * transaction, the run's tasks set and the first `concurrency` of them claimed (their wave,
   * handed to `start` once written). The run as it is then; null when the instance had tasks. */
  private async seed(
    run: RunRow,
    instance: Instance,
    specialists: RunSpecialists,
    signal: AbortSignal,
    start: StartCalls,
  ): Promise<RunRow | null> {
    const seeds = await chooseSeeds(this.d, run.id, instance, signal);
    if (!seeds) return null;
    // Step 2 for the new tasks, in the same transaction: each is created with its persona (the
    // instance had no task, so no persona carries any of its load), and its events are those the
    // seeding and then the assignment record.
    const [profiles, assistantId] = await Promise.all([specialists.all(), this.d.assistantUserId()]);
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const row = (await repo.findInstance(trx, instance.id, true))!;
      if (row.archived_at !== null || (await repo.listTasks(trx, row.id)).length > 0) return null;
      const w = await this.d.instances.writes.begin(uow, row, null);
      const load = new Map<number, number>();
      const created = await this.d.tasks.createTasks(
        trx,
        row.id,
        seeds.tasks.map((t) => {
          const personaId = pickPersona(t.specialty, profiles, load, assistantId);
          load.set(personaId, (load.get(personaId) ?? 0) + 1);
          const metadata = { seededBy: seeds.source, runId: run.id };
          return { ...t, metadata, assignedPersonaId: personaId };
        }),
      );
      for (const t of created)
        w.record(
          taskUpdated(`Task "${t.title}" created by the orchestrator (${t.specialty})`, {
            taskId: t.id,
            changed: ['created'],
            fromStatus: null,
            status: t.status,
            runId: run.id,
            source: seeds.source,
          }),
        );
      for (const t of created)
        w.record(assignedEvent(t.id, t.title, t.specialty, t.status, t.assignedPersonaId!));
      let current = run;
      if (run.run_tasks) {
        current = await runs.setRunTasks(
          trx,
          run.id,
          created.map((t) => t.id),
        );
        const started = performance.now();
        const wave = created.slice(0, run.concurrency).map((t) => ({
          id: t.id,
          title: t.title,
          status: t.status,
          specialty: t.specialty,
          assigned_persona_id: t.assignedPersonaId,
        }));
        start(await writeClaims(w, current, wave), started);
      }
      await w.end();
      return current;
    });
  }

  /** Step 2: a persona for each unassigned task (of `only`, when given). */
  private async assign(
    instance: Instance,
    only: string[] | null,
    specialists: RunSpecialists,
  ): Promise<void> {
    const open = (await repo.listTasks(this.db, instance.id)).filter(
      (t) =>
        t.assigned_persona_id === null && t.assigned_human === null && (only === null || only.includes(t.id)),
    );
    if (open.length === 0) return;
    const [profiles, assistantId] = await Promise.all([specialists.all(), this.d.assistantUserId()]);
    await transaction(this.db, async (uow) => {
      const { trx } = uow;
      const row = (await repo.findInstance(trx, instance.id, true))!;
      if (row.archived_at !== null) return;
      const w = await this.d.instances.writes.begin(uow, row, null);
      const load = await runs.tasksPerPersona(trx, row.id);
      for (const t of open) {
        const task = await repo.findTask(trx, t.id, true);
        if (!task || task.assigned_persona_id !== null || task.assigned_human !== null) continue;
        const personaId = pickPersona(task.specialty, profiles, load, assistantId);
        load.set(personaId, (load.get(personaId) ?? 0) + 1);
        await repo.updateTask(trx, task.id, { assigned_persona_id: personaId });
        w.record(assignedEvent(task.id, task.title, task.specialty, task.status, personaId));
      }
      await w.end();
    });
  }

  /** The claims of these tasks for this run, in their order (claimTogether). When another claim
   * of one of them came first (a duplicate worker), that transaction is rolled back and each task
   * is claimed on its own. */
  private async claim(request: ClaimRequest, taskIds: string[]): Promise<Claimed[]> {
    if (taskIds.length === 0) return [];
    try {
      return await claimTogether(this.d.instances, request, taskIds);
    } catch (err) {
      if (!(err instanceof ClaimTaken)) throw err;
      if (taskIds.length === 1) return [];
      const each = await Promise.all(taskIds.map((id) => this.claim(request, [id])));
      return each.flat();
    }
  }

  /** Answered tasks written (finishTogether); when another worker finished one of them first,
   * they are written each on its own (and that one not again). */
  private async endTasks(run: RunRow, instance: Instance, answered: AnsweredCall[]): Promise<void> {
    try {
      await finishTogether(this.d.instances, run, instance, answered, this.d.log);
    } catch (err) {
      if (!(err instanceof TaskFinishedElsewhere)) throw err;
      if (answered.length > 1) for (const a of answered) await this.endTasks(run, instance, [a]);
    }
  }

  /** The run completed (a failed task does not fail it); the instance's active run cleared. */
  private finishRun(run: RunRow): Promise<void> {
    return this.endRun(run, 'completed', null);
  }

  /** After the last attempt: the run failed with the error. */
  private failRun(run: RunRow, err: unknown): Promise<void> {
    const problem = toProblem(err);
    this.d.log.error({ err, runId: run.id }, 'workflow run failed');
    return this.endRun(run, 'failed', { code: problem.code, detail: problem.detail ?? null });
  }

  private async endRun(
    run: RunRow,
    status: 'completed' | 'failed',
    error: Record<string, unknown> | null,
  ): Promise<void> {
    const runId = run.id;
    await transaction(this.db, async (uow) => {
      const { trx } = uow;
      // The instance first (its lock, then the run's: the order of the instance's own writes,
      // which cancel its runs); finishRun answers nothing for a run no longer queued or running.
      const row = await repo.findInstance(trx, run.instance_id, true);
      if (!row) return;
      const ended = await runs.finishRun(trx, runId, status, error);
      if (!ended) return;
      const w = await this.d.instances.writes.begin(uow, row, null);
      if (row.active_run_id === runId) w.clearActiveRun();
      const { progress } = ended;
      w.record({
        eventType: 'workflow_run_finished',
        eventText: `Orchestrator run ${status}: ${progress.completed} of ${progress.total} task(s) completed, ${progress.failed} failed`,
        metadata: { runId, status, trigger: ended.trigger, progress, error },
      });
      await w.end();
    });
  }
}

const taskUpdated = (eventText: string, metadata: Record<string, unknown>): WriteEvent => ({
  eventType: 'workflow_task_updated',
  eventText,
  metadata,
});

/** A task given a persona. */
const assignedEvent = (taskId: string, title: string, specialty: string, status: string, personaId: number) =>
  taskUpdated(`Task "${title}" assigned to persona ${personaId} (${specialty})`, {
    taskId,
    changed: ['assignedPersonaId'],
    fromStatus: status,
    status,
    assignedPersonaId: personaId,
  });
