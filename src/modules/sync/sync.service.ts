// Sync endpoints for the external world platform (spec: "Sync endpoints"; the API contract
// "Instances, timeline and sync"): read the assistant's universal state, write timeline events.
import { isForeignKeyViolation } from '../../platform/db/errors.js';
import { DatabaseBusyError, transaction, type Db, type Executor } from '../../platform/db/database.js';
import { AppError, validationFailed } from '../../platform/http/problem.js';
import type { CharactersService } from '../characters/index.js';
import { once, type IdempotencyClaim } from '../../platform/http/idempotency.js';
import type { InventoryService } from '../inventory/index.js';
import type { AfterCommit, RecordInput, TimelineEvent, TimelineService } from '../timeline/index.js';
import type { IngestInput, UniversalState } from './sync.schemas.js';

/** Newest memories of a player, if a memory service is wired in (see deps.ts). */
export type MemoryReader = (userId: number, limit: number) => Promise<UniversalState['memories']>;

/** Ingests written in one transaction at most. */
const INGEST_BATCH = 100;

interface QueuedIngest {
  input: IngestInput;
  /** When it was queued (Date.now()). */
  at: number;
  resolve: (event: TimelineEvent) => void;
  reject: (err: unknown) => void;
}

export class SyncService {
  /** Ingests without an Idempotency-Key waiting for the one in progress (see `ingest`). */
  private queued: QueuedIngest[] = [];
  private writing = false;

  constructor(
    private readonly db: Db,
    private readonly timeline: TimelineService,
    private readonly characters: CharactersService,
    private readonly inventory: InventoryService,
    private readonly memories: MemoryReader = async () => [],
    /** How long a queued ingest may wait for its turn: the pool's connection timeout, which bounded
     * the same wait when each ingest took a connection of its own (503 `service_unavailable`). */
    private readonly maxWaitMs = 10_000,
  ) {}

  /** Writes the event through the one timeline path (enriched, linked to its observer, broadcast
   * after commit). With a claim, a retried request replays the first answer: the event, or the
   * refusal (an unknown user or instance).
   *
   * Without a claim, ingests are written one transaction at a time, and those that arrive while
   * one is being written are written together in the next (at most `INGEST_BATCH`: one instance
   * read, one insert, one commit; ids ascending in arrival order, broadcast in that order after
   * commit). Alone, an ingest is written at once as before; under load (a game server's stream of
   * events) the statements per event fall with the queue instead of the queue growing behind one
   * transaction per event (on the embedded database's single connection, each statement of each
   * transaction waited its turn). A batch refused (an unknown user or instance in one of its
   * events) is written again one event per transaction, so each request gets its own answer. An
   * ingest that waited for its turn longer than `maxWaitMs` is refused (503), as it was when it
   * waited for a connection of its own. */
  async ingest(
    input: IngestInput,
    claim: IdempotencyClaim | undefined,
  ): Promise<{ value: TimelineEvent; replayed: boolean }> {
    if (claim) return once(this.db, claim, (trx, afterCommit) => this.recordOne(trx, input, afterCommit));
    // A quest event moves the player's quest in the event's own transaction, outside the batches.
    if (questChange(input))
      return {
        value: await transaction(this.db, (trx, afterCommit) => this.recordOne(trx, input, afterCommit)),
        replayed: false,
      };
    const value = await new Promise<TimelineEvent>((resolve, reject) => {
      this.queued.push({ input, at: Date.now(), resolve, reject });
      if (!this.writing) void this.writeQueued();
    });
    return { value, replayed: false };
  }

  private async writeQueued() {
    this.writing = true;
    try {
      while (this.queued.length > 0) {
        const taken = this.queued.splice(0, INGEST_BATCH);
        const now = Date.now();
        const batch: QueuedIngest[] = [];
        for (const q of taken)
          if (now - q.at > this.maxWaitMs) q.reject(new DatabaseBusyError(this.maxWaitMs, undefined));
          else batch.push(q);
        if (batch.length > 1) {
          try {
            const events = await transaction(this.db, (trx, afterCommit) =>
              this.timeline.recordMany(
                trx,
                batch.map((q) => recordInput(q.input)),
                afterCommit,
              ),
            );
            batch.forEach((q, i) => q.resolve(events[i]!));
            continue;
          } catch (err) {
            // A refusal (raised by a statement, before the commit) is written again one by one
            // below, so it reaches its own request; anything else (the database gone, a commit
            // whose outcome is unknown) is every request's answer, as it would have been.
            if (!(err instanceof AppError) && !isForeignKeyViolation(err)) {
              for (const q of batch) q.reject(err);
              continue;
            }
          }
        }
        for (const q of batch)
          await transaction(this.db, (trx, afterCommit) => this.recordOne(trx, q.input, afterCommit)).then(
            q.resolve,
            q.reject,
          );
      }
    } finally {
      this.writing = false;
    }
  }

  private async recordOne(
    trx: Executor,
    input: IngestInput,
    afterCommit: AfterCommit,
  ): Promise<TimelineEvent> {
    try {
      const quest = questChange(input);
      if (quest) await this.characters.movePlayerQuest(trx, { ...quest, userId: input.userId });
      return await this.timeline.record(trx, recordInput(input), afterCommit);
    } catch (err) {
      // The event's foreign key decides whether the player exists: no extra round trip.
      if (
        isForeignKeyViolation(err, 'timeline_events_user_id_fkey') ||
        isForeignKeyViolation(err, 'player_quests_user_id_fkey')
      )
        throw validationFailed([{ path: 'userId', message: `no user ${input.userId}` }]);
      throw err;
    }
  }

  /** The assistant's state and emotions; with a player, that player's newest memories and
   * timeline events (`limit` each), inventory, quests and relationships. */
  async universalState(userId: number | undefined, limit: number): Promise<UniversalState> {
    const assistantState = await this.characters.assistantState();
    const base = { assistantState, emotions: assistantState.emotions };
    if (userId === undefined)
      return {
        ...base,
        memories: [],
        timeline: [],
        inventory: { items: [], energy_coins: 0 },
        quests: [],
        relationships: [],
      };
    // The inventory read answers 404 for an unknown player before anything else is gathered.
    const inventory = await this.inventory.inventory(userId);
    const [memories, timeline, quests, relationships] = [
      await this.memories(userId, limit),
      await this.timeline.list({ userId, limit }),
      await this.characters.playerQuests(userId),
      await this.characters.relationships(userId),
    ];
    return { ...base, memories, timeline, inventory, quests, relationships };
  }
}

/** What a quest event does to the player's quest: started or progressed → active, completed
 * (progress 1) or failed; undefined for any other event, or one without `metadata.questId`. */
function questChange(input: IngestInput) {
  const { questId, questProgress } = input.metadata;
  if (questId === undefined) return undefined;
  const status = QUEST_EVENTS[input.eventType];
  if (!status) return undefined;
  const progress = status === 'completed' ? 1 : questProgress;
  return { questId, status, ...(progress !== undefined ? { progress } : {}) };
}

const QUEST_EVENTS: Partial<Record<string, 'active' | 'completed' | 'failed'>> = {
  quest_started: 'active',
  quest_progressed: 'active',
  quest_completed: 'completed',
  quest_failed: 'failed',
};

function recordInput(input: IngestInput): RecordInput {
  return {
    eventType: input.eventType,
    eventText: input.eventText,
    userId: input.userId,
    instanceId: input.metadata.instanceId ?? null,
    personaId: input.metadata.personaId ?? null,
    source: typeof input.metadata.source === 'string' ? input.metadata.source : undefined,
    metadata: input.metadata,
  };
}
