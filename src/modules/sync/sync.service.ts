// Sync endpoints for the external world platform (spec: "Sync endpoints"; the API contract
// "Instances, timeline and sync"): read the assistant's universal state, write timeline events.
import { isForeignKeyViolation } from '../../platform/db/errors.js';
import type { Db } from '../../platform/db/database.js';
import { validationFailed } from '../../platform/http/problem.js';
import type { CharactersService } from '../characters/index.js';
import { once, type IdempotencyClaim } from '../../platform/http/idempotency.js';
import type { InventoryService } from '../inventory/index.js';
import type { TimelineEvent, TimelineService } from '../timeline/index.js';
import type { IngestInput, UniversalState } from './sync.schemas.js';

/** Newest memories of a player, if a memory service is wired in (see deps.ts). */
export type MemoryReader = (userId: number, limit: number) => Promise<UniversalState['memories']>;

export class SyncService {
  constructor(
    private readonly db: Db,
    private readonly timeline: TimelineService,
    private readonly characters: CharactersService,
    private readonly inventory: InventoryService,
    private readonly memories: MemoryReader = async () => [],
  ) {}

  /** Writes the event through the one timeline path (enriched, linked to its observer, broadcast
   * after commit). With a claim, a retried request replays the first answer: the event, or the
   * refusal (an unknown user or instance). */
  ingest(
    input: IngestInput,
    claim: IdempotencyClaim | undefined,
  ): Promise<{ value: TimelineEvent; replayed: boolean }> {
    return once(this.db, claim, async (trx, afterCommit) => {
      try {
        return await this.timeline.record(
          trx,
          {
            eventType: input.eventType,
            eventText: input.eventText,
            userId: input.userId,
            instanceId: input.metadata.instanceId ?? null,
            personaId: input.metadata.personaId ?? null,
            source: typeof input.metadata.source === 'string' ? input.metadata.source : undefined,
            metadata: input.metadata,
          },
          afterCommit,
        );
      } catch (err) {
        // The event's foreign key decides whether the player exists: no extra round trip.
        if (isForeignKeyViolation(err, 'timeline_events_user_id_fkey'))
          throw validationFailed([{ path: 'userId', message: `no user ${input.userId}` }]);
        throw err;
      }
    });
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
