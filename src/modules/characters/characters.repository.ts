// SQL only: character profiles and state, relationships, quests.
import { sql } from 'kysely';
import { jsonArrayFrom, jsonBuildObject } from 'kysely/helpers/postgres';
import { dbNow, type Db, type Executor } from '../../platform/db/database.js';
import { readTogether } from '../../platform/db/read-together.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';
import type { PlayerMemory, QuestStatus } from './characters.tables.js';
import type { NpcTools } from './characters.tools.js';

const now = () => dbNow();

/** Serialises the first-start seeding across nodes (released at commit). */
export async function lockSeeding(db: Executor) {
  await sql`select pg_advisory_xact_lock(74201512)`.execute(db);
}

const profileColumns = [
  'user_id',
  'description',
  'persona_type',
  'metadata',
  'emotions',
  'config',
  'tools',
  'is_assistant',
  'personality',
  'speaking_style',
  'goals',
  'player_memory',
] as const;

export function findProfile(db: Executor, userId: number) {
  return db
    .selectFrom('character_profiles')
    .select(profileColumns)
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

export type ProfileRow = NonNullable<Awaited<ReturnType<typeof findProfile>>>;

/** The profiles of several users at once (concurrent chat turns' speakers and routing). */
export function findProfiles(db: Executor, userIds: number[]) {
  return db
    .selectFrom('character_profiles')
    .select(profileColumns)
    .where('user_id', '=', sql<number>`any(${userIds}::int8[])`)
    .execute();
}

/** A character: its user's identity (the users module's) with its profile. */
export type CharacterRow = Omit<ProfileRow, 'user_id'> & {
  id: number;
  name: string;
  role: Role;
  account_type: AccountType;
};

/** The characters set to share what players tell them (`player_memory = 'shared'`). */
export async function sharedMemoryCharacters(db: Executor): Promise<number[]> {
  const rows = await db
    .selectFrom('character_profiles')
    .select('user_id')
    .where('player_memory', '=', 'shared')
    .execute();
  return rows.map((r) => r.user_id);
}

export function findAssistantProfile(db: Executor) {
  return db
    .selectFrom('character_profiles')
    .select(profileColumns)
    .where('is_assistant', '=', true)
    .executeTakeFirst();
}

export async function listProfiles(db: Executor, p: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('character_profiles')
      .select(profileColumns)
      .orderBy('user_id')
      .limit(p.limit)
      .offset(p.offset)
      .execute(),
    db
      .selectFrom('character_profiles')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Profiles in `user_id` order after `afterUserId`, at most `limit` (no count: for reading them
 * all, page by page). */
export function profilesAfter(db: Executor, afterUserId: number, limit: number) {
  return db
    .selectFrom('character_profiles')
    .select(profileColumns)
    .where('user_id', '>', afterUserId)
    .orderBy('user_id')
    .limit(limit)
    .execute();
}

export function insertProfile(
  db: Executor,
  v: {
    userId: number;
    description: string;
    personaType: string | null;
    metadata: Record<string, unknown>;
    tools?: NpcTools | null | undefined;
    isAssistant: boolean;
    card?: CardColumns | undefined;
  },
) {
  return db
    .insertInto('character_profiles')
    .values({
      user_id: v.userId,
      description: v.description,
      persona_type: v.personaType,
      metadata: v.metadata,
      emotions: {},
      config: {},
      tools: v.tools ?? null,
      is_assistant: v.isAssistant,
      ...(v.card && cardValues(v.card)),
    })
    .execute();
}

/** A character card's columns beside its description (migration 0110). */
export interface CardColumns {
  personality: string;
  speakingStyle: string;
  goals: string[];
  playerMemory: PlayerMemory;
}

/** `goals` is a jsonb array: pg would send a JS array as a PostgreSQL array. */
export function cardValues(c: CardColumns) {
  return {
    personality: c.personality,
    speaking_style: c.speakingStyle,
    goals: JSON.stringify(c.goals),
    player_memory: c.playerMemory,
  };
}

export function updateProfile(
  db: Executor,
  userId: number,
  v: Partial<{
    description: string;
    persona_type: string | null;
    metadata: Record<string, unknown>;
    emotions: Record<string, number>;
    config: Record<string, unknown>;
    tools: NpcTools | null;
  }> &
    Partial<ReturnType<typeof cardValues>>,
) {
  return db
    .updateTable('character_profiles')
    .set({ ...v, updated_at: now() })
    .where('user_id', '=', userId)
    .execute();
}

export function upsertRelationship(
  db: Executor,
  v: {
    userId: number;
    npcUserId: number;
    flags?: Record<string, boolean> | undefined;
    affinity?: number | undefined;
  },
) {
  return db
    .insertInto('relationships')
    .values({ user_id: v.userId, npc_user_id: v.npcUserId, flags: v.flags ?? {}, affinity: v.affinity ?? 0 })
    .onConflict((oc) =>
      oc.columns(['user_id', 'npc_user_id']).doUpdateSet({
        ...(v.flags !== undefined ? { flags: v.flags } : {}),
        ...(v.affinity !== undefined ? { affinity: v.affinity } : {}),
        updated_at: now(),
      }),
    )
    .execute();
}

export function listRelationships(
  db: Executor,
  f: { userId?: number | undefined; npcUserId?: number | undefined; limit?: number | undefined },
) {
  let q = db
    .selectFrom('relationships')
    .select(['user_id', 'npc_user_id', 'flags', 'affinity', 'updated_at']);
  if (f.userId !== undefined) q = q.where('user_id', '=', f.userId);
  if (f.npcUserId !== undefined) q = q.where('npc_user_id', '=', f.npcUserId);
  q = q.orderBy('user_id').orderBy('npc_user_id');
  return (f.limit !== undefined ? q.limit(f.limit) : q).execute();
}

const questColumns = ['id', 'title', 'description', 'objectives', 'metadata', 'created_at'] as const;

type QuestValues = {
  title: string;
  description: string;
  objectives: string;
  metadata: Record<string, unknown>;
};

export function insertQuest(db: Executor, v: QuestValues) {
  return db.insertInto('quests').values(v).returning(questColumns).executeTakeFirstOrThrow();
}
export function findQuest(db: Executor, id: number) {
  return db.selectFrom('quests').select(questColumns).where('id', '=', id).executeTakeFirst();
}
export type QuestRow = NonNullable<Awaited<ReturnType<typeof findQuest>>>;
export function updateQuest(db: Executor, id: number, v: QuestValues) {
  return db
    .updateTable('quests')
    .set({ ...v, updated_at: now() })
    .where('id', '=', id)
    .returning(questColumns)
    .executeTakeFirst();
}
export function deleteQuest(db: Executor, id: number) {
  return db.deleteFrom('quests').where('id', '=', id).executeTakeFirst();
}
export async function listQuests(db: Executor, p: { limit: number; offset: number }) {
  const [rows, total] = await Promise.all([
    db.selectFrom('quests').select(questColumns).orderBy('id').limit(p.limit).offset(p.offset).execute(),
    db
      .selectFrom('quests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export function upsertPlayerQuest(
  db: Executor,
  v: {
    questId: number;
    userId: number;
    status?: QuestStatus | undefined;
    progress?: number | undefined;
    step?: number | null | undefined;
  },
) {
  return db
    .insertInto('player_quests')
    .values({
      quest_id: v.questId,
      user_id: v.userId,
      status: v.status ?? 'active',
      progress: v.progress ?? 0,
      step: v.step ?? null,
    })
    .onConflict((oc) =>
      oc.columns(['user_id', 'quest_id']).doUpdateSet({
        ...(v.status !== undefined ? { status: v.status } : {}),
        ...(v.progress !== undefined ? { progress: v.progress } : {}),
        ...(v.step !== undefined ? { step: v.step } : {}),
        updated_at: now(),
      }),
    )
    .execute();
}

/** A player's quests with their titles, newest change first (not yet run). */
function playerQuestsQuery(db: Executor, userId: number) {
  return db
    .selectFrom('player_quests')
    .innerJoin('quests', 'quests.id', 'player_quests.quest_id')
    .select([
      'player_quests.quest_id',
      'quests.title',
      'quests.description',
      'quests.objectives',
      'player_quests.status',
      'player_quests.progress',
      'player_quests.step',
      'player_quests.updated_at',
    ])
    .where('player_quests.user_id', '=', userId)
    .orderBy('player_quests.updated_at', 'desc')
    .orderBy('player_quests.quest_id');
}

export function listPlayerQuests(db: Executor, userId: number, questId?: number) {
  const q = playerQuestsQuery(db, userId);
  return (questId === undefined ? q : q.where('player_quests.quest_id', '=', questId)).execute();
}
export type PlayerQuestRow = Awaited<ReturnType<typeof listPlayerQuests>>[number];

/** A chat turn's read of the player: their quests (newest change first) and their relationships
 * (the speaker's first), at most `limit` of each, read together with the turn's other reads. */
export async function playerContext(db: Db, userId: number, speakerId: number, limit: number) {
  const read = await readTogether(
    db,
    jsonBuildObject({
      quests: jsonArrayFrom(playerQuestsQuery(db, userId).limit(limit)),
      relationships: jsonArrayFrom(
        db
          .selectFrom('relationships')
          .select(['npc_user_id', 'flags', 'affinity', 'updated_at'])
          .where('user_id', '=', userId)
          .orderBy(sql`npc_user_id = ${speakerId}`, 'desc')
          .orderBy('npc_user_id')
          .limit(limit),
      ),
    }),
  );
  // JSON carries the timestamps as text and the ids as numbers.
  return {
    quests: read.quests.map((q) => ({ ...q, updated_at: new Date(q.updated_at) })),
    relationships: read.relationships.map((r) => ({ ...r, updated_at: new Date(r.updated_at) })),
  };
}
