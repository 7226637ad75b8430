// Suggestions (spec "Suggestion", "Suggestion endpoints"; contract "Suggestions"): the facade the
// routes and the job call. A context's suggestions after a pass; execute with follow-ups; clear;
// a user's answer (PUT); undo; history by channel, user and instance; the per-user config.
// Suggestions, config and a context's chosen protocol are per user: nobody sees another's.
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import { SuggestionConfigs } from './suggestions.config.js';
import { ContextResolver } from './suggestions.context.js';
import { ExecutionRefused, SuggestionExecution } from './suggestions.execution.js';
import { SuggestionGeneration } from './suggestions.generation.js';
import { toSuggestion } from './suggestions.mapping.js';
import { SuggestionOperations } from './suggestions.operations.js';
import * as repo from './suggestions.repository.js';
import {
  decideResponse,
  isOpen,
  MAX_RETURNED,
  OPEN_STATUSES,
  parseContextId,
  type AutoExecutionConfig,
  type ContextRef,
} from './suggestions.rules.js';
import type { ExecuteInput, PutInput, Suggestion } from './suggestions.schemas.js';
import type { SuggestionsDeps, SuggestionsOptions, WorkflowActor } from './suggestions.types.js';

function refOf(contextId: string): ContextRef {
  const ref = parseContextId(contextId);
  if (!ref) throw validationFailed([{ path: 'contextId', message: 'not a context id' }]);
  return ref;
}

export class SuggestionsService {
  readonly configs: SuggestionConfigs;
  private readonly generation: SuggestionGeneration;
  private readonly execution: SuggestionExecution;

  constructor(
    private readonly deps: SuggestionsDeps,
    options: SuggestionsOptions,
  ) {
    this.configs = new SuggestionConfigs(deps.db);
    this.execution = new SuggestionExecution(deps, new SuggestionOperations(deps), this.configs);
    this.generation = new SuggestionGeneration(
      deps,
      options,
      new ContextResolver(deps, options),
      this.execution,
      this.configs,
    );
  }

  private get db() {
    return this.deps.db;
  }

  /** GET: a pass (auto-executions included), then the active suggestions, at most ten. */
  async list(actor: WorkflowActor, contextId: string, message?: string) {
    const ref = refOf(contextId);
    const pass = await this.generation.pass(actor, ref, { message, autoExecute: true });
    const view = (r: repo.SuggestionRow) => toSuggestion(r, pass.config);
    return {
      contextId: ref.contextId,
      suggestions: pass.active.slice(0, MAX_RETURNED).map(view),
      autoExecuted: pass.autoExecuted.map((e) => ({ suggestion: view(e.row), result: e.result })),
    };
  }

  /** Runs one action of an active or accepted suggestion; the next pass's new suggestions (never
   * auto-executed) are its follow-ups, else a SUGGEST_NEXT_STEP when the config asks for one. */
  async execute(actor: WorkflowActor, contextId: string, input: ExecuteInput) {
    const ref = refOf(contextId);
    const s = await repo.findSuggestion(this.db, input.suggestionId, actor.id, ref.contextId);
    if (!s) throw notFound('suggestion');
    if (!isOpen(s.status))
      throw new AppError(
        'conflict',
        `The suggestion is ${s.status}; only an active or accepted one executes`,
      );
    // What is open before: follow-ups are what is active after it and was not (made by the next
    // pass, or by the job of the write it caused, whichever came first).
    const before = new Set((await repo.openIds(this.db, actor.id, ref.contextId)).map((r) => r.id));
    let done;
    try {
      done = await this.execution.run(actor, s, input.actionType, input.params, { auto: false });
    } catch (err) {
      throw err instanceof ExecutionRefused ? err.reason : err;
    }
    let followUps: repo.SuggestionRow[] = [];
    let config: AutoExecutionConfig;
    if (done.row.status === 'executed') {
      const pass = await this.generation.pass(actor, ref, { autoExecute: false });
      const fresh = pass.active.filter((r) => !before.has(r.id));
      followUps = fresh.length ? fresh : await this.generation.followUp(actor, pass, done.row);
      config = pass.config;
    } else config = await this.configs.get(actor.id);
    return {
      suggestion: toSuggestion(done.row, config),
      result: done.result,
      followUps: followUps.map((r) => toSuggestion(r, config)),
    };
  }

  /** All open suggestions of the context, or one; they become expired (`cleared`). */
  async clear(actor: WorkflowActor, contextId: string, suggestionId?: string): Promise<{ cleared: number }> {
    const ref = refOf(contextId);
    if (
      suggestionId !== undefined &&
      !(await repo.findSuggestion(this.db, suggestionId, actor.id, ref.contextId))
    )
      throw notFound('suggestion');
    const ids = (await repo.openIds(this.db, actor.id, ref.contextId, suggestionId)).map((r) => r.id);
    if (ids.length === 0) return { cleared: 0 };
    return { cleared: (await repo.expire(this.db, ids, 'cleared', OPEN_STATUSES)).length };
  }

  /** A user's answer (accepted, declined: from active only), a new priority, custom fields. */
  async put(actor: WorkflowActor, contextId: string, id: string, input: PutInput): Promise<Suggestion> {
    const ref = refOf(contextId);
    const s = await repo.findSuggestion(this.db, id, actor.id, ref.contextId);
    if (!s) throw notFound('suggestion');
    let status = s.status;
    if (input.status !== undefined) {
      const d = decideResponse(s.status, input.status);
      if (d.kind === 'invalid')
        throw new AppError(
          'invalid_transition',
          `A suggestion cannot go from ${s.status} to ${input.status}`,
          {
            from: s.status,
            to: input.status,
            allowed: d.allowed,
          },
        );
      status = input.status;
    }
    if ((input.priority !== undefined || input.metadata !== undefined) && !isOpen(s.status))
      throw new AppError('conflict', `The suggestion is ${s.status}; only an active or accepted one changes`);
    const answered = status !== s.status;
    const updated = await repo.updateSuggestion(
      this.db,
      id,
      {
        status,
        ...(answered && s.response_time_ms === null
          ? { response_time_ms: this.deps.clock().getTime() - s.created_at.getTime() }
          : {}),
        ...(input.priority !== undefined ? { priority: input.priority } : {}),
        ...(input.metadata !== undefined ? { metadata: { ...s.metadata, ...input.metadata } } : {}),
      },
      [s.status],
    );
    if (!updated) throw new AppError('conflict', 'The suggestion changed meanwhile; read it again');
    return toSuggestion(updated, await this.configs.get(actor.id));
  }

  async undo(actor: WorkflowActor, contextId: string, id: string) {
    const ref = refOf(contextId);
    const done = await this.execution.undo(actor, ref.contextId, id);
    return { suggestion: toSuggestion(done.row, await this.configs.get(actor.id)), result: done.result };
  }

  // ---- history ---------------------------------------------------------------------------------

  private async history(
    actor: WorkflowActor,
    f: Omit<Parameters<typeof repo.history>[1], 'userId'> & { userId?: number },
  ) {
    const [rows, config] = await Promise.all([repo.history(this.db, f), this.configs.get(actor.id)]);
    return rows.map((r) => toSuggestion(r, config));
  }

  /** A channel's suggestions, newest first (non-admins: their own). */
  historyOfChannel(actor: WorkflowActor, channelId: string, limit: number) {
    return this.history(actor, { channelId, limit, ...(actor.admin ? {} : { userId: actor.id }) });
  }

  /** A user's suggestions: themselves, or anyone for an admin (else 403). */
  historyOfUser(actor: WorkflowActor, userId: number, limit: number) {
    if (userId !== actor.id && !actor.admin)
      throw new AppError('forbidden', "You may not read another user's suggestion history");
    return this.history(actor, { userId, limit });
  }

  /** An instance's suggestions, for its participants (else 404; non-admins: their own). */
  async historyOfInstance(actor: WorkflowActor, instanceId: string, limit: number) {
    await this.deps.workflows.get(actor, instanceId);
    return this.history(actor, { instanceId, limit, ...(actor.admin ? {} : { userId: actor.id }) });
  }

  // ---- the job after an instance write -----------------------------------------------------------

  /** A pass for the instance's creator in each of their contexts that means it: the instance id,
   * the contexts bound to it, and its channel. */
  async generateForInstance(instanceId: string): Promise<void> {
    // The instance is read once: its creator, then the instance context's overview from the read.
    const read = await this.deps.workflows.readForCreator(instanceId);
    const creator = read?.creatorId ?? null;
    if (creator === null) return;
    // The creator's config serves every pass of the job.
    const [actor, { config, bound }] = await Promise.all([
      this.deps.actorOf(creator),
      this.configs.withBoundContexts(creator, instanceId),
    ]);
    if (!actor) return;
    const contexts = [instanceId, ...bound];
    for (let i = 0; i < contexts.length; i++) {
      const ref = parseContextId(contexts[i]!);
      if (!ref) continue;
      try {
        // Later passes read the instance afresh: an earlier one may have moved it.
        const pass = await this.generation.pass(actor, ref, {
          autoExecute: true,
          instance: i === 0 ? read : undefined,
          config,
        });
        const channelId = pass.resolved.channelId;
        if (i === 0 && channelId !== null && !contexts.includes(channelId)) contexts.push(channelId);
      } catch (err) {
        if (err instanceof AppError && err.code === 'not_found') continue;
        throw err;
      }
    }
  }
}
