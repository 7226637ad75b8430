// Running a suggestion's action and keeping its history (spec "recordSuggestionExecution"; contract
// "Suggestions"): the suggestion is claimed (no two executions of one suggestion run at once), the
// operation runs with the caller's rights, and the suggestion records the action, its timings and,
// for a refused operation, the problem, which then passes through unchanged. Also the undo of an
// auto-executed transition within the caller's undo window.
import { AppError, makeProblem, notFound, validationFailed } from '../../platform/http/problem.js';
import type { SuggestionConfigs } from './suggestions.config.js';
import type { SuggestionOperations } from './suggestions.operations.js';
import * as repo from './suggestions.repository.js';
import type { ActionType } from './suggestions.rules.js';
import type { SuggestionsDeps, WorkflowActor } from './suggestions.types.js';

/** How long an execution holds its suggestion (a process that dies mid-way frees it then). */
const CLAIM_MS = 60_000;

export interface Executed {
  row: repo.SuggestionRow;
  result: unknown;
}

/** A refused operation, after its problem was recorded with the suggestion. */
export class ExecutionRefused extends Error {
  constructor(
    readonly reason: unknown,
    readonly row: repo.SuggestionRow | undefined,
  ) {
    super('the operation was refused');
  }
}

export class SuggestionExecution {
  constructor(
    private readonly deps: SuggestionsDeps,
    private readonly ops: SuggestionOperations,
    private readonly configs: SuggestionConfigs,
  ) {}

  private get db() {
    return this.deps.db;
  }

  /** Runs one offered action (default: the first). 400 for an action not offered or a bad
   * parameter, 409 `conflict` when the suggestion is not open or already being executed; a refused
   * operation throws ExecutionRefused holding its error, recorded. */
  async run(
    actor: WorkflowActor,
    s: repo.SuggestionRow,
    actionType: ActionType | undefined,
    given: Record<string, unknown> | undefined,
    opts: { auto: boolean; expectedVersion?: number | undefined },
  ): Promise<Executed> {
    const action = actionType === undefined ? s.actions[0] : s.actions.find((a) => a.type === actionType);
    if (!action)
      throw validationFailed([
        {
          path: 'actionType',
          message: `this suggestion offers ${s.actions.map((a) => a.type).join(', ')}`,
        },
      ]);
    const params = this.ops.params(action, given);
    const now = this.deps.clock();
    const claimed = await repo.claim(this.db, s.id, now, new Date(now.getTime() + CLAIM_MS));
    if (!claimed)
      throw new AppError(
        'conflict',
        'The suggestion is no longer active or accepted, or it is being executed right now',
      );
    const started = performance.now();
    const firstResponse = (at: Date) =>
      opts.auto
        ? claimed.response_time_ms
        : (claimed.response_time_ms ?? at.getTime() - claimed.created_at.getTime());
    try {
      const done = await this.ops.perform(actor, claimed, action, params, opts);
      const at = this.deps.clock();
      const row = await repo.updateSuggestion(this.db, s.id, {
        status: done.status,
        action_type: action.type,
        auto_executed: opts.auto,
        response_time_ms: firstResponse(at),
        executed_at: done.status === 'executed' ? at : null,
        execution_time_ms: performance.now() - started,
        error: null,
        outcome: done.outcome,
      });
      return { row: row!, result: done.result };
    } catch (err) {
      const problem =
        err instanceof AppError
          ? err.toProblem()
          : makeProblem('internal', 'The operation failed unexpectedly');
      const row = await repo
        .updateSuggestion(this.db, s.id, {
          action_type: action.type,
          response_time_ms: firstResponse(this.deps.clock()),
          execution_time_ms: performance.now() - started,
          error: { ...problem },
        })
        .catch(() => undefined);
      throw new ExecutionRefused(err, row);
    }
  }

  /** Takes back an auto-executed transition: within the caller's undo window, the instance
   * unchanged since (its version), it goes back to the state and visit it left. Else 409. */
  async undo(actor: WorkflowActor, contextId: string, id: string): Promise<Executed> {
    const s = await repo.findSuggestion(this.db, id, actor.id, contextId);
    if (!s) throw notFound('suggestion');
    if (
      !s.auto_executed ||
      s.action_type !== 'TRANSITION' ||
      s.status !== 'executed' ||
      s.outcome === null ||
      s.instance_id === null ||
      s.executed_at === null
    )
      throw new AppError(
        'conflict',
        'Only a transition the suggestions executed automatically can be undone',
      );
    if (s.undone_at !== null) throw new AppError('conflict', 'The transition was already undone');
    const { undoWindowMinutes } = await this.configs.get(actor.id);
    const now = this.deps.clock();
    if (now.getTime() - s.executed_at.getTime() > undoWindowMinutes * 60_000)
      throw new AppError(
        'conflict',
        `The undo window (${undoWindowMinutes} min) has passed since the transition at ${s.executed_at.toISOString()}`,
      );
    let result;
    try {
      result = await this.deps.workflows.undoTransition(actor, s.instance_id, {
        expectedVersion: s.outcome.version,
        to: s.outcome.from,
        visit: s.outcome.visit,
        suggestionId: s.id,
      });
    } catch (err) {
      if (err instanceof AppError && err.code === 'conflict' && 'version' in err.extensions)
        throw new AppError(
          'conflict',
          'The instance changed after the transition; it can no longer be undone',
          err.extensions,
        );
      throw err;
    }
    const row = await repo.updateSuggestion(this.db, s.id, { undone_at: now }, ['executed']);
    return { row: row!, result };
  }
}
