// The chat turn's shapes, shared by its parts: what a turn emits, what the service is built
// with, the chatError payload, and what one stage of a turn hands the next.
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { Metrics } from '../../platform/http/metrics.js';
import type { Drain } from '../../platform/drain.js';
import type { FilesService } from '../files/index.js';
import type { InventoryService } from '../inventory/index.js';
import type { MemoryService } from '../memory/index.js';
import type { ProtocolsService, RoutingOutcome } from '../protocols/index.js';
import type { CharactersService, CharacterState, Npc } from '../characters/index.js';
import type { UsersService } from '../users/index.js';
import type { UserPreferences } from './chat.schemas.js';
import type {
  AssistantIdle,
  AssistantResponse,
  AssistantResponseDelta,
  AssistantThinking,
  ChatErrorPayload,
  DirectNpcResponse,
  NpcThinking,
} from './chat.events.js';
import type { VisionJob } from './chat.jobs.js';
import type { AttachedDocument } from './chat.documents.rules.js';
import type { ConversationsService, MessageRow } from './conversations.service.js';
import type { DroppedPart } from './chat.context.rules.js';
import type { ToolApprover } from './chat.tools.js';

/** What a turn sends to the client; the socket layer maps these to events (chat.events.ts). */
export interface TurnEmitter {
  thinking(e: AssistantThinking): void;
  delta(e: AssistantResponseDelta): void;
  response(e: AssistantResponse): void;
  idle(e: AssistantIdle): void;
  npcThinking(e: NpcThinking): void;
  directResponse(e: DirectNpcResponse): void;
}

export interface ChatServiceOptions {
  messagesPerMinute: number;
  toolCallsPerTurn: number;
  historyMessages: number;
  attachmentTimeoutMs: number;
  /** The token budget of the context's variable parts (memories, quests, relationships, items). */
  contextTokens: number;
  /** Asks the game to approve each economy tool change (TOOL_APPROVAL_URL); unset: none asked. */
  toolApproval?: ToolApprover | undefined;
}

/** A persona session as a turn runs in it (the persona module's record, never the client's). */
export interface TurnPersona {
  sessionId: string;
  /** The name the assistant answers as (Observer, Sister, Worker). */
  persona: string;
  /** Routing's persona type. */
  personaType: string;
  conversationId: number;
}

/** How the turn reaches persona sessions (the persona module's service, wired by deps.ts). */
export interface PersonaSessionPort {
  /** The user's session with this id (its activity touched), or undefined when it is unknown or
   * another user's. */
  forTurn(userId: number, sessionId: string, opts?: { touch?: boolean }): Promise<TurnPersona | undefined>;
}

/** What a protocol's admin access and observer capabilities add to a turn's context (wired by
 * deps.ts from the admin statistics, the instance registry and the timeline). */
export interface SystemKnowledgePort {
  /** The system's figures: accounts, memories, conversations, messages, events. */
  admin(): Promise<Record<string, unknown>>;
  /** The observers and the newest timeline events (`recentEvents`, newest first). */
  observer(): Promise<Record<string, unknown>>;
}

/** How a turn reads an attached document: the training module's Extractor (worker threads, a
 * pool of its own), wired by deps.ts, as training imports chat and chat cannot import training.
 * Rejects with an error named `ExtractionError` when the file cannot be read as its type. */
export interface DocumentExtractor {
  run(
    req: { op: 'extract'; type: 'pdf' | 'docx' | 'text'; data: Uint8Array; maxChars: number },
    timeoutMs: number,
  ): Promise<{ text: string | null; truncated: boolean }>;
}

export interface ChatServiceDeps {
  db: Db;
  log: Logger;
  counters: CounterStore;
  jobs: JobQueue;
  models: ModelGateway;
  memory: MemoryService;
  inventory: InventoryService;
  protocols: ProtocolsService;
  characters: CharactersService;
  conversations: ConversationsService;
  /** Who a user is (the prompt preview names any user). */
  users: Pick<UsersService, 'identity' | 'identities'>;
  files: FilesService;
  extractor: DocumentExtractor;
  personas: PersonaSessionPort;
  /** What admin access and observer capabilities add to a turn's context. */
  knowledge: SystemKnowledgePort;
  metrics: Pick<Metrics, 'chatTurn'>;
  /** The node's drain: a turn counts as running work, and none starts once it drains. */
  drain: Pick<Drain, 'enter'>;
  assistantName: string;
}

export class ChatTurnError extends Error {
  constructor(
    public readonly problem: ChatErrorPayload,
    cause: unknown,
  ) {
    super(problem.detail, { cause });
  }
}

export interface Speaker {
  id: number;
  name: string;
  description: string;
  /** The character's persona, emotions and config (read with it; the turn's stateSummary). */
  state?: CharacterState;
  /** The assistant itself (its turns keep the assistant's prompt and ground floor). */
  isAssistant?: boolean;
  /** The character's card: what its prompt opens with. */
  card?: CharacterCard;
}

/** Who speaks in a turn (the lead first) and their reach into the player's memories: the
 * conversations they may know, or undefined (all of them) for the assistant's own turn. */
export interface TurnCast {
  speakers: Speaker[];
  reach: number[] | undefined;
}

/** A character card as a prompt reads it (the characters module's Npc fields). */
export type CharacterCard = Pick<Npc, 'personality' | 'speakingStyle' | 'goals' | 'playerMemory'> &
  Partial<Pick<Npc, 'tools'>>;

/** What composing a turn's prompt needs (ModelTurn.prompt), all of it read before: the chat
 * turn's and the preview's. */
export interface PromptRequest {
  /** With the client the turn came from (the session's; the context records it); a preview has none. */
  user: Pick<UserPrincipal, 'id' | 'name'> & Partial<Pick<UserPrincipal, 'clientType'>>;
  /** null: the caller has no conversation yet (a preview; the turn would create the default). */
  conversationId: number | null;
  text: string;
  prefs: UserPreferences | undefined;
  cast: TurnCast;
  routing: RoutingOutcome;
  /** The chat-platform channel the turn came from (routing step 2; the context records it). */
  channelId: string | undefined;
  /** The query's embedding, requested when the turn was admitted (memory's embedQueryBatched; it
   * resolves undefined when the request fails, never rejects): retrieval's full-text side starts
   * before it answers. */
  queryEmbedding: Promise<number[] | undefined>;
  /** The conversation's messages before this turn's, oldest first. */
  history: MessageRow[];
  /** The documents attached by `uploadContextId`, read (chat.documents.ts): the prompt's section. */
  documents: AttachedDocument[];
}

/** `POST /api/admin/prompts/preview`'s input (contract: "Admin zones"). */
export interface PromptPreviewInput {
  userId: number;
  npcUserId?: number | undefined;
  channelId?: string | undefined;
  personaSessionId?: string | undefined;
  conversationId?: number | undefined;
  /** A direct message's turn (the character alone, in the player's own thread with it). */
  direct?: boolean | undefined;
  message?: string | undefined;
  preferences?: UserPreferences | undefined;
}

export interface PromptPreview {
  userId: number;
  /** The speaker who would answer; null for a group (the director speaks for them). */
  npcUserId: number | null;
  protocolId: string;
  protocol: string;
  enforced: boolean;
  reason: string;
  personaType: string | null;
  system: string;
  tools: { name: string; description: string; parameters: Record<string, unknown> | null }[];
  memories: {
    id: number;
    source: string;
    tier: string;
    content: string;
    similarity: number | null;
    owner: { id: number; name: string } | null;
  }[];
  /** The rest of the turn's context as the model gets it, and what the budget left out. */
  context: {
    playerState: unknown;
    playerQuests: unknown;
    playerInventory: unknown;
    systemWideKnowledge: unknown;
    dropped: Partial<Record<DroppedPart, number>>;
  };
}

export interface Attachment {
  job: VisionJob['image'];
}

/** A turn being answered: its prompt's request and the user's message it answers. */
export interface Turn extends PromptRequest {
  user: UserPrincipal;
  conversationId: number;
  userMessage: MessageRow;
  /** The id the (first) reply takes, reserved before the model is called so streamed deltas can
   * name it; null for a scene's director, whose replies are known only once it answered. */
  replyId: number | null;
  /** Stores the pending memories embedded with the query (once the replies are sent; never
   * rejects). */
  storeEmbeddings: () => Promise<void>;
  /** The persona session the turn runs in (`chatMessage.personaSessionId`). */
  persona?: TurnPersona | undefined;
}
