// What a context means to the caller (contract "Suggestions", first match): the workflow instance
// it names (404 unless a participant); the instance bound to it; a channel's newest unarchived
// instance of the caller's; the protocol chosen there, or the channel's workflow protocol; else
// the intent of `?message=` (or of the conversation's last user message).
import { AppError } from '../../platform/http/problem.js';
import { WORKFLOW_DEFINITIONS, type InstanceOverview, type InstanceRead } from '../workflows/index.js';
import { IntentAnalysis } from './suggestions.intent.js';
import type { ContextRef } from './suggestions.rules.js';
import * as settings from './suggestions.settings.repository.js';
import type {
  Meaning,
  ResolvedContext,
  SuggestionsDeps,
  SuggestionsOptions,
  WorkflowActor,
} from './suggestions.types.js';

/** The workflow definition a workflow protocol runs, or undefined for any other protocol. */
export const machineOfProtocol = (protocolId: string | null) =>
  protocolId === null ? undefined : WORKFLOW_DEFINITIONS.find((d) => d.protocolId === protocolId)?.machineId;

export class ContextResolver {
  private readonly intents: IntentAnalysis;

  constructor(
    private readonly deps: SuggestionsDeps,
    options: SuggestionsOptions,
  ) {
    this.intents = new IntentAnalysis(deps, options);
  }

  /** `read`: the instance of an instance context, as the caller just read it. */
  async resolve(
    actor: WorkflowActor,
    ref: ContextRef,
    message?: string,
    read?: InstanceRead,
  ): Promise<ResolvedContext> {
    if (ref.kind === 'instance') {
      const overview = await this.deps.workflowTasks.overview(actor, read ?? ref.instanceId);
      return {
        ref,
        meaning: { mode: 'instance', overview },
        channelId: overview.instance.channelId,
        stored: undefined,
      };
    }
    const [stored, lastMessage] = await Promise.all([
      settings.findContext(this.deps.db, actor.id, ref.contextId),
      // Its own 404 for another user's conversation; the text only matters without ?message=.
      ref.kind === 'conversation'
        ? this.deps.lastUserMessage(actor.id, ref.conversationId)
        : Promise.resolve(null),
    ]);
    const channelId = ref.kind === 'channel' ? ref.channelId : null;
    const done = (meaning: Meaning, channel = channelId): ResolvedContext => ({
      ref,
      meaning,
      channelId: channel,
      stored,
    });

    const bound = stored?.instance_id ? await this.openInstance(actor, stored.instance_id) : undefined;
    if (bound) return done({ mode: 'instance', overview: bound }, bound.instance.channelId ?? channelId);
    if (channelId !== null) {
      const newest = await this.deps.workflows.newestInChannel(actor.id, channelId);
      const overview = newest ? await this.openInstance(actor, newest) : undefined;
      if (overview) return done({ mode: 'instance', overview });
    }

    const chosen = stored?.protocol_id ?? null;
    const protocolId =
      machineOfProtocol(chosen) !== undefined
        ? chosen
        : channelId !== null
          ? await this.deps.channelProtocol(channelId)
          : null;
    const machineId = machineOfProtocol(protocolId);
    if (protocolId !== null && machineId !== undefined)
      return done({
        mode: 'protocol',
        protocolId,
        machineId,
        previousInstanceId: stored?.instance_id ?? null,
      });

    const text = message ?? lastMessage;
    const analysed =
      text === null || text === undefined
        ? null
        : await this.intents.analyse(actor.id, ref.contextId, text, stored);
    return done({ mode: 'intent', analysed });
  }

  /** An unarchived instance the actor takes part in, or undefined (gone, archived, not theirs). */
  private async openInstance(actor: WorkflowActor, id: string): Promise<InstanceOverview | undefined> {
    try {
      const o = await this.deps.workflowTasks.overview(actor, id);
      return o.instance.archivedAt === null ? o : undefined;
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found') return undefined;
      throw err;
    }
  }
}
