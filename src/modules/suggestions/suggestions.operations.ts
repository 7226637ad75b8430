// What each action does (contract "Suggestions": the trigger table's operations): it runs with the
// caller's rights through the same service methods the workflow routes call, and its result is
// that route's body (VIEW `{ artifacts }`, SHOW_STATUS the instance, SELECT_PROTOCOL
// `{ protocolId }`, CANCEL null). A refused operation's problem is thrown as it is.
import { z } from 'zod';
import { AppError, parseOrThrow, validationFailed } from '../../platform/http/problem.js';
import { proofUrlSchema } from '../workflows/index.js';
import { questionsFor } from './suggestions.intent.rules.js';
import type { SuggestionRow } from './suggestions.repository.js';
import type { ActionType, SuggestionStatus } from './suggestions.rules.js';
import * as settings from './suggestions.settings.repository.js';
import type { TransitionOutcome } from './suggestions.tables.js';
import { DOCS_TASK, type StoredAction } from './suggestions.triggers.rules.js';
import type { SuggestionsDeps, WorkflowActor } from './suggestions.types.js';

/** The parameters each action takes from the caller (beside its own). */
const CALLER_PARAMS: Partial<Record<ActionType, z.ZodType<Record<string, unknown>>>> = {
  APPROVE: z.object({ note: z.string().max(2000).optional() }),
  ATTACH_EVIDENCE: z.object({ description: z.string().trim().min(1).max(2000), proofUrl: proofUrlSchema }),
  REVIEW: z.object({ approve: z.boolean(), notes: z.string().max(2000).optional() }),
};

export interface Performed {
  result: unknown;
  /** Where the suggestion goes: executed; declined (CANCEL); accepted (ASK_QUESTIONS: the
   * protocol is still to be chosen). */
  status: Extract<SuggestionStatus, 'executed' | 'declined' | 'accepted'>;
  outcome: TransitionOutcome | null;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

export class SuggestionOperations {
  constructor(private readonly deps: SuggestionsDeps) {}

  /** The action's parameters: the caller's, checked (400 naming `params.<field>`), under the
   * action's own (its targets cannot be changed). */
  params(action: StoredAction, given: Record<string, unknown> | undefined): Record<string, unknown> {
    const schema = CALLER_PARAMS[action.type];
    const caller = schema ? parseOrThrow(schema, given ?? {}, 'params') : {};
    return { ...caller, ...action.params };
  }

  async perform(
    actor: WorkflowActor,
    s: SuggestionRow,
    action: StoredAction,
    params: Record<string, unknown>,
    opts: { expectedVersion?: number | undefined } = {},
  ): Promise<Performed> {
    const { workflows, workflowTasks } = this.deps;
    const executed = (result: unknown, outcome: TransitionOutcome | null = null): Performed => ({
      result,
      status: 'executed',
      outcome,
    });
    const instanceId = () => {
      if (s.instance_id === null) throw new AppError('conflict', 'The suggestion names no workflow instance');
      return s.instance_id;
    };
    switch (action.type) {
      case 'CANCEL':
        return { result: null, status: 'declined', outcome: null };
      case 'ASK_QUESTIONS': {
        const protocolId = str(params.protocolId) ?? '';
        return {
          result: { protocolId, questions: questionsFor(protocolId) },
          status: 'accepted',
          outcome: null,
        };
      }
      case 'VIEW':
        return executed({ artifacts: await workflowTasks.listArtifacts(actor, instanceId(), {}) });
      case 'SHOW_STATUS':
        return executed(await workflows.get(actor, instanceId()));
      case 'APPROVE':
        return executed(await workflows.approve(actor, instanceId(), { note: str(params.note) }));
      case 'ATTACH_EVIDENCE':
        return executed(
          await workflows.evidence(actor, instanceId(), {
            description: String(params.description),
            proofUrl: String(params.proofUrl),
            source: 'suggestion',
          }),
        );
      case 'REVIEW':
        return executed(
          await workflowTasks.review(actor, String(params.artifactId), {
            approve: params.approve === true,
            notes: str(params.notes),
          }),
        );
      case 'TRANSITION': {
        // The state and visit it leaves, and the version it makes, are what an undo needs.
        const before = await workflows.get(actor, instanceId());
        const after = await workflows.transition(actor, before.id, {
          targetState: String(params.targetState),
          expectedVersion: opts.expectedVersion ?? before.version,
          suggestionId: s.id,
        });
        return executed(after, { from: before.state, visit: before.stateVisit, version: after.version });
      }
      case 'EXECUTE':
        return executed(await this.execute(actor, s, params, instanceId));
    }
  }

  /** EXECUTE, by the suggestion's type. */
  private async execute(
    actor: WorkflowActor,
    s: SuggestionRow,
    params: Record<string, unknown>,
    instanceId: () => string,
  ): Promise<unknown> {
    const { workflows, workflowRuns } = this.deps;
    switch (s.type) {
      case 'BREAK_DOWN_TASKS':
        return workflowRuns.orchestrate(
          actor,
          instanceId(),
          { runTasks: false, concurrency: 3 },
          'suggestion',
        );
      case 'RUN_ORCHESTRATOR':
        return workflowRuns.orchestrate(
          actor,
          instanceId(),
          { runTasks: true, concurrency: 3 },
          'suggestion',
        );
      case 'GENERATE_DOCUMENTATION':
        return workflowRuns.orchestrate(
          actor,
          instanceId(),
          { runTasks: true, concurrency: 3 },
          'suggestion',
          [DOCS_TASK],
        );
      case 'CREATE_STATE_MACHINE': {
        const instance = await workflows.create(actor, {
          machineId: String(params.machineId),
          ...(s.channel_id !== null ? { channelId: s.channel_id } : {}),
        });
        await settings.upsertContext(this.deps.db, actor.id, s.context_id, { instance_id: instance.id });
        return instance;
      }
      case 'SELECT_PROTOCOL': {
        const protocolId = String(params.protocolId);
        await settings.upsertContext(this.deps.db, actor.id, s.context_id, { protocol_id: protocolId });
        return { protocolId };
      }
      case 'APPROVE_GUARD':
      case 'ATTACH_EVIDENCE':
      case 'REVIEW_ARTIFACT':
      case 'TRANSITION_STATE':
      case 'VIEW_ARTIFACTS':
      case 'SUGGEST_NEXT_STEP':
      case 'NONE':
        throw validationFailed([{ path: 'actionType', message: `${s.type} offers no EXECUTE` }]);
    }
  }
}
