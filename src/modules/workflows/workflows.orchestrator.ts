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
import type { Logger } from 'pino';
import { batchedWrites } from '../../platform/db/batched.js';
import { type Db, type Executor, transaction } from '../../platform/db/database.js';
import { toProblem } from '../../platform/http/problem.js';
import { withModelTime, type ModelGateway } from '../../platform/models/gateway.js';
import { composeSystemPrompt, mergeProtocols, type ResolvedProtocol } from '../protocols/index.js';
import {
  contextTasks,
  fixedTasks,
  offlineDraft,
  parseSeededTasks,
  pickPersona,
  seedPrompt,
  taskPrompt,
  type SeedTask,
  type Specialist,
  type TaskPromptInput,
} from './workflows.orchestrator.rules.js';
import type { PendingEvent } from './workflows.entry.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import type { WorkflowsService } from './workflows.service.js';
import type { WorkflowTasksService } from './workflows.tasks.js';

export interface OrchestratorDeps {
  db: Db;
  core: WorkflowsService;
  tasks: WorkflowTasksService;
  models: Pick<ModelGateway, 'chat' | 'offline'>;
  /** The routing protocol of a user (channel pinning included), base template loaded. */
  routeUser: (userId: number, channelId: string | null) => Promise<ResolvedProtocol>;
  /** A protocol by id (the instance's workflow protocol). */
  resolveProtocol: (id: string) => Promise<ResolvedProtocol>;
  /** NPCs with their `metadata.specialties`, and the name and description a task speaks as. */
  specialists: () => Promise<CastMember[]>;
  /** A character's name and description (the persona a task speaks as). */
  persona: (id: number) => Promise<{ name: string; description: string }>;
  assistantUserId: () => Promise<number>;
  log: Logger;
}

export interface OrchestratorOptions {
  /** How long a worker holds a run without renewing (renewed every third of it). */
  leaseSeconds: number;
}

type Instance = repo.InstanceRow;
type RunRow = runs.FullRunRow;
export type CastMember = Specialist & { name: string; description: string };

/** The specialists of one run, read once when first needed (seeding or assignment); a task's
 * persona is taken from them when they were read, instead of a read per task. */
class Cast {
  private read: Promise<CastMember[]> | undefined;
  constructor(private readonly load: () => Promise<CastMember[]>) {}
  all(): Promise<CastMember[]> {
    return (this.read ??= this.load());
  }
  /** The member with this id, when the specialists were read and it is one of them. */
  async known(id: number): Promise<CastMember | undefined> {
    return this.read && (await this.read).find((m) => m.id === id);
  }
}

/** Another claim of the task came first (its draft artifact is rolled back). */
class ClaimTaken extends Error {}

/** Another worker ended the task first (the finish's events are rolled back). */
class TaskEnded extends Error {}

/** A task this run claimed, with the draft artifact its claim created. */
interface Claimed {
  task: repo.TaskRow;
  artifactId: string;
}

/** How a task's call ended: its content, or the error that blocks the task; `modelMs`: the call's
 * time. */
type Outcome = { modelMs: number } & ({ ok: true; content: string } | { ok: false; err: unknown });

/** A claimed task's call, started as soon as its claim was written; `started`: when its claim
 * began (performance.now()). `outcome` rejects only when the call was aborted. */
interface Call {
  claimed: Claimed;
  started: number;
  outcome: Promise<Outcome>;
}

/** A claimed task whose call ended. */
type Ended = { claimed: Claimed; started: number } & Outcome;

/** Given the claims a transaction wrote, before it commits, with when their claim began. */
type StartCalls = (claimed: Claimed[], started: number) => void;

/** Tasks of a run to claim: `started` when the claim began, `start` given the claims written. */
interface Claiming {
  run: RunRow;
  instance: Instance;
  started: number;
  start: StartCalls;
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
  private take(runId: string): Promise<{ run: RunRow; instance: Instance } | null> {
    return transaction(this.db, async (trx, afterCommit) => {
      const run = await runs.findRun(trx, runId, true);
      if (!run || (run.status !== 'queued' && run.status !== 'running')) return null;
      const leased = await runs.takeRun(trx, runId, this.opts.leaseSeconds);
      if (!leased) return null;
      const instance = (await repo.findInstance(trx, run.instance_id))!;
      if (run.started_at === null)
        await this.d.core.entry.record(
          trx,
          afterCommit,
          instance,
          run.created_by_user_id,
          'workflow_run_started',
          `Orchestrator run started (${run.trigger})`,
          { runId, trigger: run.trigger, runTasks: run.run_tasks, concurrency: run.concurrency },
        );
      return { run: leased, instance };
    });
  }

  private async work(taken: { run: RunRow; instance: Instance }, signal: AbortSignal): Promise<void> {
    let { run } = taken;
    const { instance } = taken;
    const cast = new Cast(this.d.specialists);
    // The task calls' system prompt, read while the tasks are seeded and claimed (awaited before
    // the first call; a failure surfaces there).
    const prompt = run.run_tasks ? this.protocolFor(instance) : Promise.resolve('');
    prompt.catch(() => undefined);
    const call = (claimed: Claimed, s: AbortSignal) => this.call(instance, claimed, prompt, cast, s);
    const claimCalling = <T>(claiming: (start: StartCalls) => Promise<T>) =>
      this.claimAndCall(claiming, call, signal);
    // The calls of the run's first `concurrency` tasks (its wave), when the seeding claimed them.
    let seededWave: Call[] | null = null;
    if (run.trigger === 'rerun') {
      await this.assign(instance, run.task_ids, cast);
    } else if (run.task_ids.length === 0) {
      // Tasks the seeding created are the instance's only ones, pending and assigned: nothing is
      // left to assign or to read back, and the seeding claims the first of them.
      const seeded = await claimCalling((start) => this.seed(run, instance, cast, signal, start));
      if (seeded.result) {
        run = seeded.result;
        seededWave = seeded.calls;
      } else {
        await this.assign(instance, null, cast);
        if (run.run_tasks) {
          const pending = (await repo.listTasks(this.db, instance.id, 'pending'))
            .filter((t) => t.assigned_persona_id !== null)
            .map((t) => t.id);
          run = await runs.setRunTasks(this.db, run.id, pending);
        }
      }
    }
    if (run.run_tasks && run.task_ids.length > 0) {
      const queue = [...run.task_ids];
      // The first `concurrency` tasks are claimed in one transaction (the seeding's, when it
      // created them; else one of their own), not in as many at once, each holding a
      // connection; each later one is claimed when a worker is free.
      const first = queue.splice(0, run.concurrency);
      const started = performance.now();
      const wave =
        seededWave ??
        (await claimCalling((start) => this.claim({ run, instance, started, start }, first))).calls;
      // The finishes that come together (a wave's calls answered at once) are written together.
      const finish = batchedWrites((ended: Ended[]) => this.endTasks(run, instance, ended));
      const ended = async (c: Call) => {
        const outcome = await c.outcome;
        if (signal.aborted) throw signal.reason;
        await finish({ claimed: c.claimed, started: c.started, ...outcome });
      };
      const worker = async (claimed: Call | undefined) => {
        if (claimed) await ended(claimed);
        for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
          if (signal.aborted) throw signal.reason;
          const started = performance.now();
          const { calls } = await claimCalling((start) =>
            this.claim({ run, instance, started, start }, [id]),
          );
          if (calls[0]) await ended(calls[0]);
        }
      };
      const workers = Math.min(run.concurrency, run.task_ids.length);
      await Promise.all(Array.from({ length: workers }, (_, i) => worker(wave[i])));
    }
    if (signal.aborted) throw signal.reason;
    await this.finishRun(run);
  }

  /** Step 1: tasks for an instance with none, each assigned; for a run that runs them, in the same
   * transaction, the run's tasks set and the first `concurrency` of them claimed (their wave,
   * handed to `start` once written). The run as it is then; null when the instance had tasks. */
  private async seed(
    run: RunRow,
    instance: Instance,
    cast: Cast,
    signal: AbortSignal,
    start: StartCalls,
  ): Promise<RunRow | null> {
    let seeds: SeedTask[] | null = contextTasks(instance.context);
    let source = 'context';
    // Only a model call is worth a look first; otherwise the locked read below decides.
    if (!seeds && !this.d.models.offline) {
      if ((await repo.listTasks(this.db, instance.id)).length > 0) return null;
      const p = seedPrompt({
        machineId: instance.machine_id,
        state: instance.state,
        context: instance.context,
      });
      try {
        const r = await this.d.models.chat({
          purpose: 'workflow.seed',
          system: p.system,
          messages: [{ role: 'user', content: p.user }],
          temperature: 0.2,
          signal,
        });
        seeds = parseSeededTasks(r.text);
        source = 'model';
      } catch (err) {
        if (signal.aborted) throw err;
        this.d.log.warn({ err, runId: run.id }, 'task seeding call failed; the fixed tasks are used');
      }
    }
    if (!seeds) {
      seeds = fixedTasks(instance.machine_id);
      source = 'fixed';
    }
    const tasks = seeds;
    // Step 2 for the new tasks, in the same transaction: each is created with its persona (the
    // instance had no task, so no persona carries any of its load), and its events are those the
    // seeding and then the assignment record.
    const [specialists, assistantId] = await Promise.all([cast.all(), this.d.assistantUserId()]);
    return transaction(this.db, async (trx, afterCommit) => {
      const row = (await repo.findInstance(trx, instance.id, true))!;
      if (row.archived_at !== null || (await repo.listTasks(trx, row.id)).length > 0) return null;
      const load = new Map<number, number>();
      const created = await this.d.tasks.createTasks(
        trx,
        row.id,
        tasks.map((t) => {
          const personaId = pickPersona(t.specialty, specialists, load, assistantId);
          load.set(personaId, (load.get(personaId) ?? 0) + 1);
          return { ...t, metadata: { seededBy: source, runId: run.id }, assignedPersonaId: personaId };
        }),
      );
      let current = run;
      const claimEvents: PendingEvent[] = [];
      if (run.run_tasks) {
        current = await runs.setRunTasks(
          trx,
          run.id,
          created.map((t) => t.id),
        );
        const started = performance.now();
        const claims = await this.writeClaims(
          trx,
          current,
          row,
          created.slice(0, run.concurrency).map((t) => ({
            id: t.id,
            title: t.title,
            status: t.status,
            specialty: t.specialty,
            assigned_persona_id: t.assignedPersonaId!,
          })),
        );
        start(claims.claimed, started);
        claimEvents.push(...claims.events);
      }
      const event = (eventText: string, metadata: Record<string, unknown>): PendingEvent => ({
        row,
        actorId: null,
        eventType: 'workflow_task_updated',
        eventText,
        metadata,
      });
      await this.d.core.entry.recordAll(trx, afterCommit, [
        ...created.map((t) =>
          event(`Task "${t.title}" created by the orchestrator (${t.specialty})`, {
            taskId: t.id,
            changed: ['created'],
            fromStatus: null,
            status: t.status,
            runId: run.id,
            source,
          }),
        ),
        ...created.map((t) =>
          event(`Task "${t.title}" assigned to persona ${t.assignedPersonaId} (${t.specialty})`, {
            taskId: t.id,
            changed: ['assignedPersonaId'],
            fromStatus: t.status,
            status: t.status,
            assignedPersonaId: t.assignedPersonaId,
          }),
        ),
        ...claimEvents,
      ]);
      return current;
    });
  }

  /** Step 2: a persona for each unassigned task (of `only`, when given). */
  private async assign(instance: Instance, only: string[] | null, cast: Cast): Promise<void> {
    const open = (await repo.listTasks(this.db, instance.id)).filter(
      (t) =>
        t.assigned_persona_id === null && t.assigned_human === null && (only === null || only.includes(t.id)),
    );
    if (open.length === 0) return;
    const [specialists, assistantId] = await Promise.all([cast.all(), this.d.assistantUserId()]);
    await transaction(this.db, async (trx, afterCommit) => {
      const row = (await repo.findInstance(trx, instance.id, true))!;
      if (row.archived_at !== null) return;
      const load = await runs.tasksPerPersona(trx, row.id);
      const events: PendingEvent[] = [];
      for (const t of open) {
        const task = await repo.findTask(trx, t.id, true);
        if (!task || task.assigned_persona_id !== null || task.assigned_human !== null) continue;
        const personaId = pickPersona(task.specialty, specialists, load, assistantId);
        load.set(personaId, (load.get(personaId) ?? 0) + 1);
        await repo.updateTask(trx, task.id, { assigned_persona_id: personaId });
        events.push({
          row,
          actorId: null,
          eventType: 'workflow_task_updated',
          eventText: `Task "${task.title}" assigned to persona ${personaId} (${task.specialty})`,
          metadata: {
            taskId: task.id,
            changed: ['assignedPersonaId'],
            fromStatus: task.status,
            status: task.status,
            assignedPersonaId: personaId,
          },
        });
      }
      await this.d.core.entry.recordAll(trx, afterCommit, events);
    });
  }

  /** The system prompt of the run's task calls: the creator's routing protocol merged with the
   * instance's workflow protocol (at its state). */
  private async protocolFor(instance: Instance): Promise<string> {
    if (this.d.models.offline) return '';
    const subject = instance.created_by_user_id ?? (await this.d.assistantUserId());
    const [routing, workflow] = await Promise.all([
      this.d.routeUser(subject, instance.channel_id),
      this.d.resolveProtocol(instance.protocol_id),
    ]);
    return composeSystemPrompt(mergeProtocols(routing, workflow, instance.state)).system;
  }

  /** Runs `claiming`, a transaction that claims tasks and hands them to its `start` once written,
   * and starts each claimed task's call there, before the commit: the model's time overlaps the
   * commit (a task's finish waits for it all the same, as it starts after this answers). Answers
   * the transaction's result and the calls once the claims committed; when the transaction
   * fails, the calls it started are aborted. */
  private async claimAndCall<T>(
    claiming: (start: StartCalls) => Promise<T>,
    call: (claimed: Claimed, signal: AbortSignal) => Promise<Outcome>,
    signal: AbortSignal,
  ): Promise<{ result: T; calls: Call[] }> {
    const rolledBack = new AbortController();
    const callSignal = AbortSignal.any([signal, rolledBack.signal]);
    const calls: Call[] = [];
    try {
      const result = await claiming((claimed, started) => {
        for (const c of claimed) {
          const outcome = call(c, callSignal);
          outcome.catch(() => undefined); // awaited by the task's worker, unless rolled back
          calls.push({ claimed: c, started, outcome });
        }
      });
      return { result, calls };
    } catch (err) {
      rolledBack.abort(err);
      throw err;
    }
  }

  /** Step 3 for one claimed task: its one model call (persona, merged routing + workflow
   * protocol, task, context). A failed call is an outcome (the task is blocked); rejects only when
   * `signal` aborted, or when the system prompt could not be read. */
  private async call(
    instance: Instance,
    claimed: Claimed,
    prompt: Promise<string>,
    cast: Cast,
    signal: AbortSignal,
  ): Promise<Outcome> {
    const { task } = claimed;
    const personaId = task.assigned_persona_id!;
    const system = await prompt;
    let modelMs = 0;
    try {
      const input: TaskPromptInput = {
        persona: (await cast.known(personaId)) ?? (await this.d.persona(personaId)),
        task: {
          title: task.title,
          description: task.description,
          specialty: task.specialty,
          notes: task.notes,
        },
        instance: { machineId: instance.machine_id, state: instance.state, context: instance.context },
      };
      if (this.d.models.offline) return { ok: true, content: offlineDraft(input), modelMs };
      const content = await withModelTime(async (account) => {
        try {
          const r = await this.d.models.chat({
            purpose: 'workflow.task',
            system,
            messages: [{ role: 'user', content: taskPrompt(input) }],
            signal,
          });
          return r.text;
        } finally {
          modelMs = account.ms;
        }
      });
      return { ok: true, content, modelMs };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      return { ok: false, err, modelMs };
    }
  }

  /** The claims of these tasks for this run, in their order (each handed to `start` once
   * written, `started` the time the claim began): each created with its draft artifact (the task
   * in progress), or the one an interrupted attempt left running; a task done or not runnable has
   * none. All in one transaction; when another claim of one of them came first (a duplicate
   * worker), that one is rolled back and each task is claimed on its own. */
  private async claim(c: Claiming, taskIds: string[]): Promise<Claimed[]> {
    if (taskIds.length === 0) return [];
    try {
      return await this.claimTogether(c, taskIds);
    } catch (err) {
      if (!(err instanceof ClaimTaken)) throw err;
      if (taskIds.length === 1) return [];
      const each = await Promise.all(taskIds.map((id) => this.claim(c, [id])));
      return each.flat();
    }
  }

  private claimTogether({ run, instance, started, start }: Claiming, taskIds: string[]): Promise<Claimed[]> {
    return transaction(this.db, async (trx, afterCommit) => {
      // A share lock: the instance's writes (its completion among them) wait for the claim, but
      // the claims and finishes of the run's other tasks do not (none of them writes the
      // instance's row). The tasks' own row locks order claims of one task.
      const row = (await repo.findInstance(trx, instance.id, 'share'))!;
      const found = new Map(
        (await runs.lockTasksWithClaims(trx, run.id, taskIds)).map((t) => [t.id, t] as const),
      );
      const resumed = new Map<string, Claimed>();
      const fresh: repo.TaskRow[] = [];
      for (const id of taskIds) {
        const f = found.get(id);
        if (!f) continue;
        const { claim_status, claim_artifact_id, ...task } = f;
        if (claim_status !== null) {
          if (claim_status === 'running' && claim_artifact_id !== null)
            resumed.set(id, { task, artifactId: claim_artifact_id });
          continue;
        }
        if (row.archived_at !== null || task.assigned_persona_id === null) continue;
        const runnable = run.trigger === 'rerun' ? task.status !== 'in_progress' : task.status === 'pending';
        if (runnable) fresh.push(task);
      }
      const written = await this.writeClaims(trx, run, row, fresh);
      const claimed = new Map(written.claimed.map((c) => [c.task.id, c] as const));
      const all = taskIds.flatMap((id) => resumed.get(id) ?? claimed.get(id) ?? []);
      start(all, started);
      await this.d.core.entry.recordAll(trx, afterCommit, written.events);
      return all;
    });
  }

  /** Claims these runnable, unclaimed tasks (their locks held, or just created) for the run: each
   * its draft artifact and claim, the task in progress; and the events that say so, for the
   * caller to record with its others. */
  private async writeClaims(
    trx: Executor,
    run: RunRow,
    row: Instance,
    tasks: Pick<repo.TaskRow, 'id' | 'title' | 'status' | 'specialty' | 'assigned_persona_id'>[],
  ): Promise<{ claimed: Claimed[]; events: PendingEvent[] }> {
    if (tasks.length === 0) return { claimed: [], events: [] };
    // Under the tasks' locks no other claim of them can come between the caller's read and this
    // write; if one did, the draft artifacts are rolled back with the rest.
    const written = await runs.claimTasks(
      trx,
      run.id,
      row.id,
      tasks.map((t) => ({
        taskId: t.id,
        personaId: t.assigned_persona_id!,
        summary: t.title,
        metadata: { runId: run.id, specialty: t.specialty },
      })),
    );
    if (written.length < tasks.length) throw new ClaimTaken();
    return {
      claimed: written.map(({ artifact_id: artifactId, ...task }) => ({ task, artifactId })),
      events: tasks.map((t) => ({
        row,
        actorId: null,
        eventType: 'workflow_task_updated',
        eventText: `Task "${t.title}" started: ${t.status} → in_progress`,
        metadata: {
          taskId: t.id,
          changed: ['status'],
          fromStatus: t.status,
          status: 'in_progress',
          runId: run.id,
        },
      })),
    };
  }

  /** Ended tasks: each artifact ready and its task completed, or the task blocked (the artifact
   * stays draft); the run's progress counts them. In one transaction; nothing is written when the
   * run is no longer running. When another worker ended one of them first, they are written
   * each on its own (and that one not again). */
  private async endTasks(run: RunRow, instance: Instance, ended: Ended[]): Promise<void> {
    try {
      await this.writeEnds(run, instance, ended);
    } catch (err) {
      if (!(err instanceof TaskEnded)) throw err;
      if (ended.length > 1) for (const e of ended) await this.endTasks(run, instance, [e]);
    }
  }

  private async writeEnds(run: RunRow, instance: Instance, ended: Ended[]): Promise<void> {
    await transaction(this.db, async (trx, afterCommit) => {
      // A task's time runs to here, its finish's wait for a connection included (the finish's
      // one writing statement below is left out: the time is written by it).
      const now = performance.now();
      const written = await runs.finishTasks(
        trx,
        instance.id,
        run.id,
        ended.map((e) => ({
          taskId: e.claimed.task.id,
          artifactId: e.claimed.artifactId,
          outcome: e.ok ? { ok: true, content: e.content } : { ok: false },
          wallMs: now - e.started,
          modelMs: e.modelMs,
        })),
      );
      if (!written?.open) return;
      // Another worker ended one of them (nothing of this batch is kept).
      if (written.ended < ended.length) throw new TaskEnded();
      const { row } = written;
      const events: PendingEvent[] = ended.map((e) => {
        const { task, artifactId } = e.claimed;
        const common = { taskId: task.id, artifactId, personaId: task.assigned_persona_id, runId: run.id };
        if (e.ok)
          return {
            row,
            actorId: null,
            eventType: 'workflow_task_completed',
            eventText: `Task "${task.title}" completed; artifact ready`,
            metadata: common,
          };
        const problem = toProblem(e.err);
        if (problem.code === 'internal')
          this.d.log.error({ err: e.err, runId: run.id }, 'workflow task failed');
        return {
          row,
          actorId: null,
          eventType: 'workflow_task_failed',
          eventText: `Task "${task.title}" failed and is blocked: ${problem.detail ?? problem.title}`,
          metadata: { ...common, error: { code: problem.code, detail: problem.detail ?? null } },
        };
      });
      await this.d.core.entry.recordAll(trx, afterCommit, events);
    });
  }

  /** The run completed (a failed task does not fail it); the instance's active run cleared. */
  private finishRun(run: RunRow): Promise<void> {
    return this.end(run, 'completed', null);
  }

  /** After the last attempt: the run failed with the error. */
  private failRun(run: RunRow, err: unknown): Promise<void> {
    const problem = toProblem(err);
    this.d.log.error({ err, runId: run.id }, 'workflow run failed');
    return this.end(run, 'failed', { code: problem.code, detail: problem.detail ?? null });
  }

  private async end(
    run: RunRow,
    status: 'completed' | 'failed',
    error: Record<string, unknown> | null,
  ): Promise<void> {
    const runId = run.id;
    await transaction(this.db, async (trx, afterCommit) => {
      // The instance first (its lock, then the run's: the order of the instance's own writes,
      // which cancel its runs); finishRun answers nothing for a run no longer queued or running.
      const row = await repo.findInstance(trx, run.instance_id, true);
      if (!row) return;
      const ended = await runs.finishRun(trx, runId, status, error);
      if (!ended) return;
      const current = row.active_run_id === runId ? await repo.setActiveRun(trx, row.id, null) : row;
      await this.d.core.entry.record(
        trx,
        afterCommit,
        current,
        null,
        'workflow_run_finished',
        `Orchestrator run ${status}: ${ended.progress.completed} of ${ended.progress.total} task(s) completed, ${ended.progress.failed} failed`,
        { runId, status, trigger: ended.trigger, progress: ended.progress, error },
      );
    });
  }
}
