// Each user's auto-execution config (contract "Suggestions": GET/PUT /api/suggestions/config):
// the defaults until the user changes something, the `decisions` map, and the creator's
// `autoRunOrchestrator`, which the workflows module asks through its port.
import type { Db, Executor } from '../../platform/db/database.js';
import { DEFAULT_CONFIG, decisions, type ActionType, type AutoExecutionConfig } from './suggestions.rules.js';
import type { PutConfigInput } from './suggestions.schemas.js';
import * as settings from './suggestions.settings.repository.js';

const unique = (xs: ActionType[]) => [...new Set(xs)];

function fromRow(r: settings.ConfigRow | undefined): AutoExecutionConfig {
  if (!r) return { ...DEFAULT_CONFIG };
  return {
    autoRunOrchestrator: r.auto_run_orchestrator,
    autoTransitionOnGuard: r.auto_transition_on_guard,
    autoSuggestNextStep: r.auto_suggest_next_step,
    requireConfirmationFor: r.require_confirmation_for,
    neverAutoExecute: r.never_auto_execute,
    undoWindowMinutes: r.undo_window_minutes,
  };
}

export class SuggestionConfigs {
  constructor(private readonly db: Db) {}

  async get(userId: number, executor: Executor = this.db): Promise<AutoExecutionConfig> {
    return fromRow(await settings.findConfig(executor, userId));
  }

  /** The config and the contexts the user bound to an instance, read together (the pass after an
   * instance write). */
  async withBoundContexts(
    userId: number,
    instanceId: string,
  ): Promise<{ config: AutoExecutionConfig; bound: string[] }> {
    const { config, bound } = await settings.configAndBoundContexts(this.db, userId, instanceId);
    return { config: fromRow(config), bound };
  }

  async view(userId: number) {
    const config = await this.get(userId);
    return { ...config, decisions: decisions(config) };
  }

  /** Fields left out keep their values; lists are stored without repeats. */
  async put(userId: number, input: PutConfigInput) {
    const current = await this.get(userId);
    const next: AutoExecutionConfig = {
      autoRunOrchestrator: input.autoRunOrchestrator ?? current.autoRunOrchestrator,
      autoTransitionOnGuard: input.autoTransitionOnGuard ?? current.autoTransitionOnGuard,
      autoSuggestNextStep: input.autoSuggestNextStep ?? current.autoSuggestNextStep,
      requireConfirmationFor: unique(input.requireConfirmationFor ?? current.requireConfirmationFor),
      neverAutoExecute: unique(input.neverAutoExecute ?? current.neverAutoExecute),
      undoWindowMinutes: input.undoWindowMinutes ?? current.undoWindowMinutes,
    };
    await settings.upsertConfig(this.db, userId, next);
    return { ...next, decisions: decisions(next) };
  }

  /** WorkflowPorts.autoRunOrchestrator: read with the workflow write's own transaction. */
  readonly autoRunOrchestrator = async (userId: number, executor: Executor): Promise<boolean> =>
    (await this.get(userId, executor)).autoRunOrchestrator;
}
