// Characters and their state (contract: "Characters and their state"): the assistant's own
// user, NPC users with profiles, character state (persona, emotions, config), relationships per
// player and character, and quests with each player's status and progress.
import { batchedByKey } from '../../platform/db/batched.js';
import { type Db, type Executor, transaction } from '../../platform/db/database.js';
import { NoticedCache, idOf } from '../../platform/db/noticed-cache.js';
import type { ChangeFeed } from '../../platform/db/notifications.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';
import type { UsersService } from '../users/index.js';
import * as repo from './characters.repository.js';
import type {
  CharacterState,
  Npc,
  NpcInput,
  PlayerQuest,
  PutStateInput,
  Quest,
  QuestInput,
  Relationship,
  RelationshipInput,
} from './characters.schemas.js';
import type { QuestStatus } from './characters.tables.js';
import type { NpcTools } from './characters.tools.js';

export function toNpc(r: repo.CharacterRow): Npc {
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    personaType: r.persona_type,
    metadata: r.metadata,
    tools: r.tools ?? null,
    isAssistant: r.is_assistant,
    personality: r.personality,
    speakingStyle: r.speaking_style,
    goals: r.goals,
    playerMemory: r.player_memory,
  };
}

/** The card's columns from a create or replace body (the schema's defaults filled in). */
const cardOf = (input: NpcInput): repo.CardColumns => ({
  personality: input.personality ?? '',
  speakingStyle: input.speakingStyle ?? '',
  goals: input.goals ?? [],
  playerMemory: input.playerMemory ?? 'own',
});

export function toState(r: repo.CharacterRow): CharacterState {
  return {
    persona: { name: r.name, description: r.description, personaType: r.persona_type },
    emotions: r.emotions,
    config: r.config,
  };
}

/** A profile with its user's identity. */
function withIdentity(
  profile: repo.ProfileRow,
  user: { id: number; name: string; role: Role; accountType: AccountType },
): repo.CharacterRow {
  const { user_id: _userId, ...rest } = profile;
  return { ...rest, id: user.id, name: user.name, role: user.role, account_type: user.accountType };
}

function toQuest(r: repo.QuestRow): Quest {
  return {
    id: r.id,
    title: r.title,
    description: r.description,
    objectives: r.objectives,
    metadata: r.metadata,
    createdAt: r.created_at.toISOString(),
  };
}

function toPlayerQuest(r: repo.PlayerQuestRow): PlayerQuest {
  return {
    questId: r.quest_id,
    title: r.title,
    description: r.description,
    objectives: r.objectives,
    status: r.status,
    progress: r.progress,
    step: r.step,
    updatedAt: r.updated_at.toISOString(),
  };
}

export interface CharactersServiceOptions {
  changes: ChangeFeed;
  /** How long a node trusts a cached profile that no change notice has dropped (RECORD_CACHE_MS). */
  profileCacheMs: number;
}

export class CharactersService {
  private assistantId: number | undefined;
  // Every chat turn reads its lead speaker's profile and its player's (routing's persona type),
  // and few writes change one: each node keeps them (noticed-cache.ts; every write below announces
  // its character, a deletion through its account), and the misses of concurrent turns share one statement (batched.ts).
  private readonly profiles: NoticedCache<number, repo.ProfileRow | undefined>;

  constructor(
    private readonly db: Db,
    private readonly users: UsersService,
    opts: CharactersServiceOptions,
  ) {
    const read = batchedByKey(
      (userIds: number[]) => repo.findProfiles(this.db, userIds),
      (row) => row.user_id,
    );
    this.profiles = new NoticedCache(read, opts.changes, {
      channel: 'character_changed',
      ttlMs: opts.profileCacheMs,
      keyOf: idOf,
    });
  }

  private profileOf(id: number) {
    return this.profiles.get(id);
  }

  /** Drops a character's cached profile: its user changed (a deletion, heard from the accounts). */
  userChanged(id: number): void {
    this.profiles.forget(id);
  }

  /** Creates the assistant's own user (silicon + npc) unless it exists. Idempotent; an advisory
   * lock makes two nodes starting together create exactly one. */
  async ensureAssistant(name: string): Promise<number> {
    const id = await transaction(this.db, async (uow) => {
      const { trx } = uow;
      await repo.lockSeeding(trx);
      const existing = await repo.findAssistantProfile(trx);
      if (existing) return existing.user_id;
      const user = await this.users.create(
        { email: null, password: null, name, role: 'silicon', accountType: 'npc' },
        uow,
      );
      await repo.insertProfile(trx, {
        userId: user.id,
        description: '',
        personaType: 'assistant',
        metadata: {},
        isAssistant: true,
      });
      this.profiles.changedIn(uow, user.id);
      return user.id;
    });
    this.assistantId = id;
    return id;
  }

  /** The assistant's user id (the API contract: created at first start). */
  async assistantUserId(executor: Executor = this.db): Promise<number> {
    if (this.assistantId !== undefined) return this.assistantId;
    const a = await repo.findAssistantProfile(executor);
    if (!a) throw new AppError('internal', 'The assistant has not been created yet');
    return (this.assistantId = a.user_id);
  }

  /** A character's card tools and whether it is the assistant (a chat turn's tool limits), or
   * undefined when it has no profile. */
  async toolsOf(id: number): Promise<{ tools: NpcTools | null; isAssistant: boolean } | undefined> {
    const p = await this.profileOf(id);
    return p && { tools: p.tools ?? null, isAssistant: p.is_assistant };
  }

  /** A character: its profile and its user's identity (asked of users), read at once. */
  private async findCharacter(executor: Executor, id: number): Promise<repo.CharacterRow | undefined> {
    const [profile, user] = await Promise.all([
      executor === this.db ? this.profileOf(id) : repo.findProfile(executor, id),
      this.users.identity(id, executor),
    ]);
    return profile && user && withIdentity(profile, user);
  }

  private async character(id: number, executor: Executor = this.db): Promise<repo.CharacterRow> {
    const row = await this.findCharacter(executor, id);
    if (!row) throw notFound('character');
    return row;
  }

  async createNpc(input: NpcInput): Promise<Npc> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      const user = await this.users.create(
        { email: null, password: null, name: input.name, role: 'silicon', accountType: 'npc' },
        uow,
      );
      await repo.insertProfile(trx, {
        userId: user.id,
        description: input.description,
        personaType: input.personaType ?? null,
        metadata: input.metadata ?? {},
        tools: input.tools ?? null,
        isAssistant: false,
        card: cardOf(input),
      });
      this.profiles.changedIn(uow, user.id);
      return toNpc((await this.findCharacter(trx, user.id))!);
    });
  }

  async getNpc(id: number, executor: Executor = this.db): Promise<Npc> {
    return toNpc(await this.character(id, executor));
  }

  /** The characters whose knowledge of a player is one shared pool (playerMemory `shared`). */
  sharedMemoryCharacters(): Promise<number[]> {
    return repo.sharedMemoryCharacters(this.db);
  }

  /** A user as protocol routing sees them: role, account type, and the persona type of their
   * character profile (none without one). One read; not_found for no such user. */
  async routingSubject(userId: number) {
    const [user, profile] = await Promise.all([this.users.identity(userId), this.profileOf(userId)]);
    if (!user) throw notFound('user');
    return {
      id: user.id,
      role: user.role,
      accountType: user.accountType,
      personaType: profile?.persona_type ?? null,
    };
  }

  /** Profile and state from one read (the chat turn needs both for the speaking character). */
  async getNpcWithState(
    id: number,
    executor: Executor = this.db,
  ): Promise<{ npc: Npc; state: CharacterState }> {
    const row = await this.character(id, executor);
    return { npc: toNpc(row), state: toState(row) };
  }

  async listNpcs(p: { limit: number; offset: number }) {
    const { rows: profiles, total } = await repo.listProfiles(this.db, p);
    const users = await this.users.identities(profiles.map((r) => r.user_id));
    const rows = profiles.flatMap((r) => {
      const user = users.get(r.user_id);
      return user ? [withIdentity(r, user)] : [];
    });
    return { npcs: rows.map(toNpc), total };
  }

  /** Every NPC (the assistant included), for callers that choose among them all (the workflow
   * orchestrator's specialists): a page of profiles and their users' identities per 500, and no
   * count, so usually two reads where listNpcs pages take three. */
  async allNpcs(page = 500): Promise<Npc[]> {
    const out: Npc[] = [];
    for (let after = 0; ;) {
      const profiles = await repo.profilesAfter(this.db, after, page);
      if (profiles.length === 0) return out;
      const users = await this.users.identities(profiles.map((r) => r.user_id));
      for (const r of profiles) {
        const user = users.get(r.user_id);
        if (user) out.push(toNpc(withIdentity(r, user)));
      }
      if (profiles.length < page) return out;
      after = profiles[profiles.length - 1]!.user_id;
    }
  }

  /** PUT: replaces name, description, persona type, metadata and the card. */
  async replaceNpc(id: number, input: NpcInput): Promise<Npc> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      await this.character(id, trx);
      await this.users.rename(id, input.name, uow);
      await repo.updateProfile(trx, id, {
        description: input.description,
        persona_type: input.personaType ?? null,
        metadata: input.metadata ?? {},
        ...repo.cardValues(cardOf(input)),
        tools: input.tools ?? null,
      });
      this.profiles.changedIn(uow, id);
      return toNpc((await this.findCharacter(trx, id))!);
    });
  }

  async deleteNpc(id: number): Promise<void> {
    await transaction(this.db, async (uow) => {
      const row = await this.character(id, uow.trx);
      if (row.is_assistant) throw new AppError('conflict', 'The assistant itself cannot be deleted');
      // The account's own notice drops the cached profile on every node (`userChanged`).
      await this.users.remove(id, uow);
    });
  }

  async getState(id: number, executor: Executor = this.db): Promise<CharacterState> {
    return toState(await this.character(id, executor));
  }

  /** Emotions and config are replaced when given; persona fields are changed one by one. */
  async putState(id: number, input: PutStateInput): Promise<CharacterState> {
    return transaction(this.db, async (uow) => {
      const { trx } = uow;
      await this.character(id, trx);
      if (input.persona?.name !== undefined) await this.users.rename(id, input.persona.name, uow);
      await repo.updateProfile(trx, id, {
        ...(input.persona?.description !== undefined ? { description: input.persona.description } : {}),
        ...(input.persona?.personaType !== undefined ? { persona_type: input.persona.personaType } : {}),
        ...(input.emotions !== undefined ? { emotions: input.emotions } : {}),
        ...(input.config !== undefined ? { config: input.config } : {}),
      });
      this.profiles.changedIn(uow, id);
      return toState((await this.findCharacter(trx, id))!);
    });
  }

  /** The assistant's state (the spec's assistantState). */
  async assistantState(executor: Executor = this.db): Promise<CharacterState> {
    return this.getState(await this.assistantUserId(executor), executor);
  }

  /** Sets a player's relationship with a character; given fields replace the stored ones. */
  async putRelationship(input: RelationshipInput): Promise<Relationship> {
    return transaction(this.db, async ({ trx }) => {
      if (!(await this.users.exists(input.userId, trx)))
        throw validationFailed([{ path: 'userId', message: `no user ${input.userId}` }]);
      if (!(await this.findCharacter(trx, input.npcUserId)))
        throw validationFailed([{ path: 'npcUserId', message: `no character ${input.npcUserId}` }]);
      await repo.upsertRelationship(trx, input);
      const [row] = await this.relationships(input.userId, input.npcUserId, trx);
      return row!;
    });
  }

  async relationships(
    userId: number | undefined,
    npcUserId?: number,
    executor: Executor = this.db,
    limit?: number,
  ): Promise<Relationship[]> {
    const rows = await repo.listRelationships(executor, { userId, npcUserId, limit });
    const names = await this.users.identities(
      rows.map((r) => r.npc_user_id),
      executor,
    );
    return rows.map((r) => ({
      userId: r.user_id,
      npcUserId: r.npc_user_id,
      npcName: names.get(r.npc_user_id)?.name ?? '',
      flags: r.flags,
      affinity: r.affinity,
      updatedAt: r.updated_at.toISOString(),
    }));
  }

  /** What a chat turn knows of the player from this module: their quests (newest change first)
   * and their relationships (the speaker's first), at most `limit` of each: one statement, and
   * the characters' names when there are relationships. */
  async playerContext(
    userId: number,
    speakerId: number,
    limit = 50,
  ): Promise<{ quests: PlayerQuest[]; relationships: Relationship[] }> {
    const read = await repo.playerContext(this.db, userId, speakerId, limit);
    const names = await this.users.identities(read.relationships.map((r) => r.npc_user_id));
    return {
      quests: read.quests.map(toPlayerQuest),
      relationships: read.relationships.map((r) => ({
        userId,
        npcUserId: r.npc_user_id,
        npcName: names.get(r.npc_user_id)?.name ?? '',
        flags: r.flags,
        affinity: r.affinity,
        updatedAt: r.updated_at.toISOString(),
      })),
    };
  }

  async createQuest(input: QuestInput): Promise<Quest> {
    return toQuest(
      await repo.insertQuest(this.db, {
        title: input.title,
        description: input.description,
        objectives: JSON.stringify(input.objectives ?? []),
        metadata: input.metadata ?? {},
      }),
    );
  }

  async getQuest(id: number): Promise<Quest> {
    const q = await repo.findQuest(this.db, id);
    if (!q) throw notFound('quest');
    return toQuest(q);
  }

  async listQuests(p: { limit: number; offset: number }) {
    const { rows, total } = await repo.listQuests(this.db, p);
    return { quests: rows.map(toQuest), total };
  }

  async replaceQuest(id: number, input: QuestInput): Promise<Quest> {
    const q = await repo.updateQuest(this.db, id, {
      title: input.title,
      description: input.description,
      objectives: JSON.stringify(input.objectives ?? []),
      metadata: input.metadata ?? {},
    });
    if (!q) throw notFound('quest');
    return toQuest(q);
  }

  async deleteQuest(id: number): Promise<void> {
    const r = await repo.deleteQuest(this.db, id);
    if (Number(r.numDeletedRows) === 0) throw notFound('quest');
  }

  /** A player's status and progress on a quest (created on first use). */
  async setPlayerQuest(
    questId: number,
    userId: number,
    change: {
      status?: QuestStatus | undefined;
      progress?: number | undefined;
      step?: number | null | undefined;
    },
  ): Promise<PlayerQuest> {
    return transaction(this.db, async ({ trx }) => {
      if (!(await repo.findQuest(trx, questId))) throw notFound('quest');
      if (!(await this.users.exists(userId, trx))) throw notFound('user');
      await repo.upsertPlayerQuest(trx, { questId, userId, ...change });
      const [row] = await this.playerQuests(userId, questId, trx);
      return row!;
    });
  }

  /** A quest event from the world (sync ingest) moving a player's quest, in the event's
   * transaction; an unknown quest is the request's fault (400). */
  async movePlayerQuest(
    trx: Executor,
    change: { questId: number; userId: number; status: QuestStatus; progress?: number | undefined },
  ): Promise<void> {
    if (!(await repo.findQuest(trx, change.questId)))
      throw validationFailed([{ path: 'metadata.questId', message: `no quest ${change.questId}` }]);
    await repo.upsertPlayerQuest(trx, change);
  }

  async playerQuests(userId: number, questId?: number, executor: Executor = this.db): Promise<PlayerQuest[]> {
    return (await repo.listPlayerQuests(executor, userId, questId)).map(toPlayerQuest);
  }
}
