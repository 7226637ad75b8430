// The orchestrator's model calls for one run: each claimed task's call (the persona and task in
// the user part, the system prompt composed from the creator's routing protocol merged with the
// instance's workflow protocol at its state; offline, a fixed draft), started as soon as its
// claim is written, the specialists the run's tasks speak as, and the seeding's one call.
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.js';
import { withModelTime, type ModelGateway } from '../../platform/models/gateway.js';
import { composeSystemPrompt, mergeProtocols, type ResolvedProtocol } from '../protocols/index.js';
import {
  contextTasks,
  fixedTasks,
  offlineDraft,
  parseSeededTasks,
  seedPrompt,
  taskPrompt,
  type SeedTask,
  type Specialist,
  type TaskPromptInput,
} from './workflows.orchestrator.rules.js';
import * as repo from './workflows.repository.js';

/** A specialist with the name and description its tasks speak as. */
export type SpecialistPersona = Specialist & { name: string; description: string };

/** What the calls need besides the run. */
export interface CallDeps {
  models: Pick<ModelGateway, 'chat' | 'offline'>;
  /** The routing protocol of a user (channel pinning included), base template loaded. */
  routeUser: (userId: number, channelId: string | null) => Promise<ResolvedProtocol>;
  /** A protocol by id (the instance's workflow protocol). */
  resolveProtocol: (id: string) => Promise<ResolvedProtocol>;
  /** A character's name and description (the persona a task speaks as). */
  persona: (id: number) => Promise<{ name: string; description: string }>;
  assistantUserId: () => Promise<number>;
}

/** The specialists of one run, read once when first needed (seeding or assignment); a task's
 * persona is taken from them when they were read, instead of a read per task. */
export class RunSpecialists {
  private read: Promise<SpecialistPersona[]> | undefined;
  constructor(private readonly load: () => Promise<SpecialistPersona[]>) {}
  all(): Promise<SpecialistPersona[]> {
    return (this.read ??= this.load());
  }
  /** The specialist with this id, when the specialists were read already and it is one of them. */
  async ifRead(id: number): Promise<SpecialistPersona | undefined> {
    return this.read && (await this.read).find((m) => m.id === id);
  }
}

/** A task this run claimed, with the draft artifact its claim created. */
export interface Claimed {
  task: repo.TaskRow;
  artifactId: string;
}

/** How a task's call ended: its content, or the error that blocks the task; `modelMs`: the call's
 * time. */
export type Outcome = { modelMs: number } & ({ ok: true; content: string } | { ok: false; err: unknown });

/** A claimed task's call, started as soon as its claim was written; `started`: when its claim
 * began (performance.now()). `outcome` rejects only when the call was aborted. */
export interface Call {
  claimed: Claimed;
  started: number;
  outcome: Promise<Outcome>;
}

/** A claimed task whose call answered, with how. */
export type AnsweredCall = { claimed: Claimed; started: number } & Outcome;

/** Given the claims a transaction wrote, before it commits, with when their claim began. */
export type StartCalls = (claimed: Claimed[], started: number) => void;

type Instance = repo.InstanceRow;

export class RunCalls {
  /** The calls' system prompt. */
  private readonly system: Promise<string>;

  constructor(
    private readonly d: CallDeps,
    private readonly instance: Instance,
    private readonly specialists: RunSpecialists,
    runsTasks: boolean,
  ) {
    this.system = runsTasks ? this.systemPrompt() : Promise.resolve('');
    // Read while the run's tasks are seeded and claimed, so the first call does not wait for it;
    // the first call awaits it, and a failure surfaces there.
    this.system.catch(() => undefined);
  }

  /** Runs `claiming`, a transaction that claims tasks and hands them to its `start` once written,
   * and starts each claimed task's call there, before the commit: the model's time overlaps the
   * commit (a task's finish waits for it all the same, as it starts after this answers). Answers
   * the transaction's result and the calls once the claims committed; when the transaction
   * fails, the calls it started are aborted. */
  async claimAndCall<T>(
    claiming: (start: StartCalls) => Promise<T>,
    signal: AbortSignal,
  ): Promise<{ result: T; calls: Call[] }> {
    const rolledBack = new AbortController();
    const callSignal = AbortSignal.any([signal, rolledBack.signal]);
    const calls: Call[] = [];
    try {
      const result = await claiming((claimed, started) => {
        for (const c of claimed) {
          const outcome = this.call(c, callSignal);
          // It runs while the claim commits; the task's worker awaits it, unless the claim rolls
          // back (the call is then aborted and nobody waits for it).
          outcome.catch(() => undefined);
          calls.push({ claimed: c, started, outcome });
        }
      });
      return { result, calls };
    } catch (err) {
      rolledBack.abort(err);
      throw err;
    }
  }

  /** One claimed task's model call (persona, merged routing + workflow protocol, task, context).
   * A failed call is an outcome (the task is blocked); rejects only when `signal` aborted, or
   * when the system prompt could not be read. */
  private async call(claimed: Claimed, signal: AbortSignal): Promise<Outcome> {
    const { task } = claimed;
    const { instance } = this;
    const personaId = task.assigned_persona_id!;
    const system = await this.system;
    let modelMs = 0;
    try {
      const input: TaskPromptInput = {
        persona: (await this.specialists.ifRead(personaId)) ?? (await this.d.persona(personaId)),
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

  /** The system prompt of the run's task calls: the creator's routing protocol merged with the
   * instance's workflow protocol (at its state). */
  private async systemPrompt(): Promise<string> {
    const { instance } = this;
    if (this.d.models.offline) return '';
    const subject = instance.created_by_user_id ?? (await this.d.assistantUserId());
    const [routing, workflow] = await Promise.all([
      this.d.routeUser(subject, instance.channel_id),
      this.d.resolveProtocol(instance.protocol_id),
    ]);
    return composeSystemPrompt(mergeProtocols(routing, workflow, instance.state)).system;
  }
}

/** The tasks to seed and where they come from: the instance's `context.tasks`, else one model
 * call's answer, else (offline, a failed call, an unparseable answer) the flow's fixed tasks.
 * Null when a model call would be made but the instance has tasks already (only a model call is
 * worth that look first; otherwise the seeding's locked read decides). */
export async function chooseSeeds(
  d: Pick<CallDeps, 'models'> & { db: Db; log: Logger },
  runId: string,
  instance: Instance,
  signal: AbortSignal,
): Promise<{ tasks: SeedTask[]; source: 'context' | 'model' | 'fixed' } | null> {
  const fromContext = contextTasks(instance.context);
  if (fromContext) return { tasks: fromContext, source: 'context' };
  if (!d.models.offline) {
    if ((await repo.listTasks(d.db, instance.id)).length > 0) return null;
    const p = seedPrompt({
      machineId: instance.machine_id,
      state: instance.state,
      context: instance.context,
    });
    try {
      const r = await d.models.chat({
        purpose: 'workflow.seed',
        system: p.system,
        messages: [{ role: 'user', content: p.user }],
        temperature: 0.2,
        signal,
      });
      const parsed = parseSeededTasks(r.text);
      if (parsed) return { tasks: parsed, source: 'model' };
    } catch (err) {
      if (signal.aborted) throw err;
      d.log.warn({ err, runId }, 'task seeding call failed; the fixed tasks are used');
    }
  }
  return { tasks: fixedTasks(instance.machine_id), source: 'fixed' };
}
