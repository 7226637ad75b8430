// A generation pass (contract "Suggestions"; on every GET, after an execution, and in the job that
// follows each instance write): what the context means, the suggestions whose trigger holds, and
// against them the stored ones: open ones no longer wanted or past their ttl expire (`trigger`,
// `ttl`), wanted ones not open are created unless their key was declined, cleared, executed or
// undone. Then, when asked, the actions the caller's config lets run by themselves are executed
// (at most one TRANSITION a pass).
import type { Logger } from 'pino';
import type { InstanceRead } from '../workflows/index.js';
import { transaction, type Executor } from '../../platform/db/database.js';
import { AppError } from '../../platform/http/problem.js';
import type { SuggestionConfigs } from './suggestions.config.js';
import type { ContextResolver } from './suggestions.context.js';
import { ExecutionRefused, type Executed, type SuggestionExecution } from './suggestions.execution.js';
import { toOrdered } from './suggestions.mapping.js';
import * as repo from './suggestions.repository.js';
import {
  autoExecutableFlag,
  autoExecute,
  blocksKey,
  compareSuggestions,
  isOpen,
  SAFETY_OF,
  ttlElapsed,
  type AutoExecutionConfig,
  type ContextRef,
} from './suggestions.rules.js';
import {
  instanceCandidates,
  intentCandidates,
  nextStepCandidate,
  protocolCandidates,
  type Candidate,
} from './suggestions.triggers.rules.js';
import { protocolOfIntent } from './suggestions.intent.rules.js';
import type {
  ResolvedContext,
  SuggestionsDeps,
  SuggestionsOptions,
  WorkflowActor,
} from './suggestions.types.js';

export interface PassResult {
  resolved: ResolvedContext;
  config: AutoExecutionConfig;
  /** The context's active suggestions, in order (all of them; GET shows the first ten). */
  active: repo.SuggestionRow[];
  /** What this pass created. */
  created: repo.SuggestionRow[];
  autoExecuted: Executed[];
}

export interface PassOptions {
  message?: string | undefined;
  autoExecute: boolean;
  /** A pass after an auto-executed transition: no second TRANSITION runs. */
  transitioned?: boolean;
  /** The instance of an instance context as the caller just read it (the job after a write), so
   * it is not read again; the pass after an auto-executed transition reads it afresh. */
  instance?: InstanceRead | undefined;
  /** The caller's config, when read already (the job reads it once for all its passes). */
  config?: AutoExecutionConfig;
}

/** The trigger table for what the context means. */
function candidatesOf(resolved: ResolvedContext): Candidate[] {
  const m = resolved.meaning;
  switch (m.mode) {
    case 'instance': {
      const { instance, definition, approver, tasks, artifacts } = m.overview;
      const fwd = instance.allowedTransitions[0];
      return instanceCandidates({
        id: instance.id,
        machineId: instance.machineId,
        state: instance.state,
        stateVisit: instance.stateVisit,
        initial: definition.initial,
        archived: instance.archivedAt !== null,
        forward: fwd ? { to: fwd.to, guard: fwd.guard, satisfied: fwd.satisfied } : null,
        approver,
        tasks,
        artifacts,
        activeRunId: instance.activeRunId,
      });
    }
    case 'protocol':
      return protocolCandidates(m);
    case 'intent':
      return m.analysed
        ? intentCandidates({ ...m.analysed, protocolId: protocolOfIntent(m.analysed.intent) })
        : [];
  }
}

/** Open suggestions wanted beyond the trigger table: a follow-up while its instance stays in the
 * same state visit; a protocol selection while no newer message was analysed. */
function keptBeyondTriggers(r: repo.SuggestionRow, resolved: ResolvedContext): boolean {
  const m = resolved.meaning;
  if (r.type === 'SUGGEST_NEXT_STEP')
    return (
      m.mode === 'instance' &&
      r.instance_id === m.overview.instance.id &&
      r.state_visit === m.overview.instance.stateVisit
    );
  if (r.type === 'SELECT_PROTOCOL') return m.mode === 'intent' && m.analysed === null;
  return false;
}

/** Where new suggestions of the context belong: its instance, channel, protocol and state. */
function scopeOf(resolved: ResolvedContext) {
  const m = resolved.meaning;
  const instance = m.mode === 'instance' ? m.overview.instance : null;
  return {
    instanceId: instance?.id ?? null,
    channelId: resolved.channelId,
    protocolId: instance?.protocolId ?? (m.mode === 'protocol' ? m.protocolId : null),
    state: instance?.state ?? null,
    stateVisit: instance?.stateVisit ?? null,
  };
}

export class SuggestionGeneration {
  constructor(
    private readonly deps: SuggestionsDeps,
    private readonly options: SuggestionsOptions,
    private readonly resolver: ContextResolver,
    private readonly execution: SuggestionExecution,
    private readonly configs: SuggestionConfigs,
  ) {}

  private get log(): Logger {
    return this.deps.log;
  }

  async pass(actor: WorkflowActor, ref: ContextRef, opts: PassOptions): Promise<PassResult> {
    const [resolved, config] = await Promise.all([
      this.resolver.resolve(actor, ref, opts.message, opts.instance),
      opts.config ?? this.configs.get(actor.id),
    ]);
    const candidates = candidatesOf(resolved);
    const stored = await repo.contextRows(
      this.deps.db,
      actor.id,
      ref.contextId,
      candidates.map((c) => c.key),
    );
    const now = this.deps.clock();
    const wanted = new Set(candidates.map((c) => c.key));
    const pastTtl: string[] = [];
    const unwanted: string[] = [];
    const open = new Map<string, repo.SuggestionRow>();
    const blocked = new Set<string>();
    for (const r of stored) {
      if (r.status === 'active' && ttlElapsed(r.created_at, r.ttl, now)) pastTtl.push(r.id);
      else if (r.status === 'active' && !wanted.has(r.key) && !keptBeyondTriggers(r, resolved))
        unwanted.push(r.id);
      else if (isOpen(r.status)) open.set(r.key, r);
      else if (blocksKey({ status: r.status, expiredReason: r.expired_reason })) blocked.add(r.key);
    }
    const fresh = candidates.filter((c) => !open.has(c.key) && !blocked.has(c.key));
    const write = async (executor: Executor) => {
      if (pastTtl.length) await repo.expire(executor, pastTtl, 'ttl');
      if (unwanted.length) await repo.expire(executor, unwanted, 'trigger');
      return fresh.length ? this.insert(executor, actor, resolved, fresh, now) : [];
    };
    // One statement is atomic by itself: a transaction (two statements more) only for several.
    const writes = [pastTtl, unwanted, fresh].filter((xs) => xs.length > 0).length;
    const created: repo.SuggestionRow[] =
      writes === 0
        ? []
        : writes === 1
          ? await write(this.deps.db)
          : await transaction(this.deps.db, ({ trx }) => write(trx));
    // A pass racing this one created some of the same keys: what is open now is read again.
    const current =
      created.length < fresh.length
        ? (await repo.contextRows(this.deps.db, actor.id, ref.contextId, [])).filter((r) => isOpen(r.status))
        : [...open.values(), ...created];
    const active = current
      .filter((r) => r.status === 'active')
      .sort((a, b) => compareSuggestions(toOrdered(a), toOrdered(b)));
    const result: PassResult = { resolved, config, active, created, autoExecuted: [] };
    return opts.autoExecute ? this.autoExecute(actor, ref, opts, result) : result;
  }

  private insert(
    executor: Parameters<typeof repo.insertSuggestions>[0],
    actor: WorkflowActor,
    resolved: ResolvedContext,
    candidates: Candidate[],
    now: Date,
  ) {
    const scope = scopeOf(resolved);
    return repo.insertSuggestions(
      executor,
      candidates.map((c) => ({
        ...c,
        ...scope,
        userId: actor.id,
        contextId: resolved.ref.contextId,
        ttl: this.options.ttlSeconds,
        createdAt: now,
      })),
    );
  }

  /** Runs what the config lets run by itself, in order (follow-ups never); after a TRANSITION the
   * context is looked at again (a new state visit) without a second one. */
  private async autoExecute(
    actor: WorkflowActor,
    ref: ContextRef,
    opts: PassOptions,
    pass: PassResult,
  ): Promise<PassResult> {
    const { config } = pass;
    const m = pass.resolved.meaning;
    const version = m.mode === 'instance' ? m.overview.instance.version : undefined;
    const done: Executed[] = [];
    const remaining: repo.SuggestionRow[] = [];
    let transitioned = false;
    for (const r of pass.active) {
      const a = r.actions[0];
      // Not a follow-up (a next step is offered, never taken), nor one a refusal was kept for.
      const runs =
        a !== undefined &&
        r.type !== 'SUGGEST_NEXT_STEP' &&
        r.error === null &&
        !(a.type === 'TRANSITION' && (transitioned || opts.transitioned === true)) &&
        autoExecute(
          { type: a.type, safety: SAFETY_OF[a.type], autoExecutable: autoExecutableFlag(a.type, config) },
          config,
        );
      if (!runs) {
        remaining.push(r);
        continue;
      }
      try {
        done.push(await this.execution.run(actor, r, a.type, {}, { auto: true, expectedVersion: version }));
        if (a.type === 'TRANSITION') transitioned = true;
      } catch (err) {
        // Another pass executes it (or did): it is no longer this pass's to show.
        if (err instanceof AppError && err.code === 'conflict') continue;
        if (!(err instanceof ExecutionRefused)) throw err;
        this.log.info({ err: err.reason, suggestionId: r.id }, 'auto-execution refused');
        remaining.push(err.row ?? r);
      }
    }
    if (transitioned) {
      const again = await this.pass(actor, ref, { ...opts, instance: undefined, transitioned: true });
      return {
        ...again,
        created: [...pass.created, ...again.created],
        autoExecuted: [...done, ...again.autoExecuted],
      };
    }
    return { ...pass, active: remaining, autoExecuted: done };
  }

  /** After an execution whose next pass created nothing: a SUGGEST_NEXT_STEP (never after one). */
  async followUp(
    actor: WorkflowActor,
    pass: PassResult,
    after: repo.SuggestionRow,
  ): Promise<repo.SuggestionRow[]> {
    const m = pass.resolved.meaning;
    if (!pass.config.autoSuggestNextStep || m.mode !== 'instance' || after.type === 'SUGGEST_NEXT_STEP')
      return [];
    const c = nextStepCandidate({
      instanceId: m.overview.instance.id,
      stateVisit: m.overview.instance.stateVisit,
      after: after.id,
    });
    return this.insert(this.deps.db, actor, pass.resolved, [c], this.deps.clock());
  }
}
