// The shapes the suggestions module's parts share: what it is built from (the workflows services
// whose operations suggestions run, the chat and chat-platform answers it reads, the model
// gateway, the clock) and what a context means once resolved.
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type {
  InstanceOverview,
  WorkflowActor,
  WorkflowRunsService,
  WorkflowsService,
  WorkflowTasksService,
} from '../workflows/index.js';
import type { ContextRef } from './suggestions.rules.js';
import type { ContextRow } from './suggestions.settings.repository.js';
import type { IntentResult } from './suggestions.intent.rules.js';

export interface SuggestionsDeps {
  db: Db;
  log: Logger;
  models: Pick<ModelGateway, 'chat' | 'offline'>;
  /** Shared counters: the intent calls each user causes per minute. */
  counters: Pick<CounterStore, 'hit'>;
  workflows: WorkflowsService;
  workflowTasks: WorkflowTasksService;
  workflowRuns: WorkflowRunsService;
  /** The text of the newest user message of the caller's conversation (null: none yet); another
   * user's conversation is 404. */
  lastUserMessage: (userId: number, conversationId: number) => Promise<string | null>;
  /** The protocol a chat-platform channel carries, or null. */
  channelProtocol: (channelId: string) => Promise<string | null>;
  /** A user as an actor (name, admin), for work done on their behalf; undefined when gone. */
  actorOf: (userId: number) => Promise<WorkflowActor | undefined>;
  /** The service's clock: suggestion timestamps, ttl expiry and the undo window. */
  clock: () => Date;
}

export interface SuggestionsOptions {
  /** Seconds a new suggestion lives (3600). */
  ttlSeconds: number;
  /** Intent model calls a user's requests may cause per minute; past it, no intent is found. */
  intentCallsPerMinute: number;
}

/** What a context means, first match (contract "Suggestions"): that instance, its bound instance,
 * a channel's newest unarchived instance of the caller's; the chosen protocol or the channel's
 * workflow protocol; else intent analysis (`analysed` null: no message to analyse). */
export type Meaning =
  | { mode: 'instance'; overview: InstanceOverview }
  | { mode: 'protocol'; protocolId: string; machineId: string; previousInstanceId: string | null }
  | { mode: 'intent'; analysed: IntentResult | null };

export interface ResolvedContext {
  ref: ContextRef;
  meaning: Meaning;
  /** The channel of a channel context, or of the instance. */
  channelId: string | null;
  /** The user's stored facts about the context (chosen protocol, bound instance, intent cache). */
  stored: ContextRow | undefined;
}

export type { WorkflowActor };
