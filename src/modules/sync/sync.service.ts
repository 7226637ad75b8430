// Sync endpoints for the external world platform (spec: "Sync endpoints"; the API contract
// "Instances, timeline and sync"): read the assistant's universal state, write timeline events.
import { isForeignKeyViolation } from '../../platform/db/errors.js';
import type { Db } from '../../platform/db/database.js';
import { GroupCommit } from '../../platform/db/group-commit.js';
import type { Flushed, UnitOfWork } from '../../platform/db/unit-of-work.js';
import { AppError, validationFailed } from '../../platform/http/problem.js';
import type { CharactersService } from '../characters/index.js';
import { once, type IdempotencyClaim } from '../../platform/http/idempotency.js';
import type { InventoryService } from '../inventory/index.js';
import type { RecordInput, TimelineEvent, TimelineService } from '../timeline/index.js';
import type { IngestInput, UniversalState } from './sync.schemas.js';

/** Newest memories of a player, if a memory service is wired in (see deps.ts). */
export type MemoryReader = (userId: number, limit: number) => Promise<UniversalState['memories']>;

/** Ingests written in one transaction at most. */
const INGEST_BATCH = 100;

export class SyncService {
  /** Ingests without an Idempotency-Key, written in groups under load (group-commit.ts). */
  private readonly groups: GroupCommit;

  constructor(
    private readonly db: Db,
    private readonly timeline: TimelineService,
    private readonly characters: CharactersService,
    private readonly inventory: InventoryService,
    private readonly memories: MemoryReader = async () => [],
    /** How long an ingest may wait for its group: the pool's connection timeout, which bounds the
     * same wait for a connection of its own (503 `service_unavailable`). */
    maxWaitMs = 10_000,
  ) {
    this.groups = new GroupCommit(db, {
      max: INGEST_BATCH,
      maxWaitMs,
      isRefusal: (err) => err instanceof AppError || isForeignKeyViolation(err),
    });
  }

  /** Writes the event through the one timeline path (enriched, linked to its observer, broadcast
   * after commit), as one unit of work (`write`). With a claim, a retried request replays the
   * first answer: the event, or the refusal (an unknown user, instance or quest). Without one,
   * the ingests that arrive while others are written are written together, as one unit (at most
   * `INGEST_BATCH`: one instance read, one insert, one commit; ids ascending in arrival order,
   * broadcast in that order after commit), and a group refused is written again one ingest per
   * unit, so each request gets its own answer (group-commit.ts). */
  async ingest(
    input: IngestInput,
    claim: IdempotencyClaim | undefined,
  ): Promise<{ value: TimelineEvent; replayed: boolean }> {
    if (claim) return once(this.db, claim, (uow) => this.writeNow(uow, input));
    try {
      return { value: await this.groups.run((uow) => this.write(uow, input)), replayed: false };
    } catch (err) {
      throw refusalOf(err, input);
    }
  }

  /** `write`, flushed at once: a refusal is the request's own (stored under its claim). */
  private async writeNow(uow: UnitOfWork, input: IngestInput): Promise<TimelineEvent> {
    try {
      return await this.write(uow, input);
    } catch (err) {
      throw refusalOf(err, input);
    }
  }

  /** The ingest's writes, added to the unit, not awaited (the group flushes them): the quest
   * change, when the event is one, and the event. */
  private write(uow: UnitOfWork, input: IngestInput): Flushed<TimelineEvent> {
    const quest = questChange(input);
    if (quest) void uow.send(this.characters.movePlayerQuest(uow.trx, { ...quest, userId: input.userId }));
    return this.timeline.record(uow, recordInput(input));
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

/** The event's and the quest's foreign keys decide whether the player exists: no extra round
 * trip. */
function refusalOf(err: unknown, input: IngestInput): unknown {
  if (
    isForeignKeyViolation(err, 'timeline_events_user_id_fkey') ||
    isForeignKeyViolation(err, 'player_quests_user_id_fkey')
  )
    return validationFailed([{ path: 'userId', message: `no user ${input.userId}` }]);
  return err;
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
