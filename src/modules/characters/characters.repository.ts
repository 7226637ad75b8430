// SQL only: character profiles and state, relationships, quests.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { QuestStatus } from './characters.tables.js';

const now = () => dbNow();

/** Serialises the first-start seeding across nodes (released at commit). */
export async function lockSeeding(db: Executor) {
  await sql`select pg_advisory_xact_lock(74201512)`.execute(db);
}

const characterColumns = [
  'users.id',
  'users.name',
  'users.role',
  'users.account_type',
  'character_profiles.description',
  'character_profiles.persona_type',
  'character_profiles.metadata',
  'character_profiles.emotions',
  'character_profiles.config',
  'character_profiles.is_assistant',
] as const;

export function findCharacter(db: Executor, id: number) {
  return db
    .selectFrom('character_profiles')
    .innerJoin('users', 'users.id', 'character_profiles.user_id')
    .select(characterColumns)
    .where('users.id', '=', id)
    .executeTakeFirst();
}
/** Any user's role and account type, with their profile's persona type when they have one. */
export function findUserWithPersona(db: Executor, id: number) {
  return db
    .selectFrom('users')
    .leftJoin('character_profiles', 'character_profiles.user_id', 'users.id')
    .select(['users.id', 'users.role', 'users.account_type', 'character_profiles.persona_type'])
    .where('users.id', '=', id)
    .executeTakeFirst();
}

export type CharacterRow = NonNullable<Awaited<ReturnType<typeof findCharacter>>>;

export function findAssistant(db: Executor) {
  return db
    .selectFrom('character_profiles')
    .innerJoin('users', 'users.id', 'character_profiles.user_id')
    .select(characterColumns)
    .where('character_profiles.is_assistant', '=', true)
    .executeTakeFirst();
}

export async function listCharacters(db: Executor, p: { limit: number; offset: number }) {
  const base = db
    .selectFrom('character_profiles')
    .innerJoin('users', 'users.id', 'character_profiles.user_id');
  const [rows, total] = await Promise.all([
    base.select(characterColumns).orderBy('users.id').limit(p.limit).offset(p.offset).execute(),
    base.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export function insertProfile(
  db: Executor,
  v: {
    userId: number;
    description: string;
    personaType: string | null;
    metadata: Record<string, unknown>;
    isAssistant: boolean;
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
      is_assistant: v.isAssistant,
    })
    .execute();
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
  }>,
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

export function listRelationships(db: Executor, f: { userId: number; npcUserId?: number | undefined }) {
  let q = db
    .selectFrom('relationships')
    .innerJoin('users', 'users.id', 'relationships.npc_user_id')
    .select([
      'relationships.user_id',
      'relationships.npc_user_id',
      'users.name as npc_name',
      'relationships.flags',
      'relationships.affinity',
      'relationships.updated_at',
    ])
    .where('relationships.user_id', '=', f.userId);
  if (f.npcUserId !== undefined) q = q.where('relationships.npc_user_id', '=', f.npcUserId);
  return q.orderBy('relationships.npc_user_id').execute();
}

const questColumns = ['id', 'title', 'description', 'metadata', 'created_at'] as const;

export function insertQuest(
  db: Executor,
  v: { title: string; description: string; metadata: Record<string, unknown> },
) {
  return db.insertInto('quests').values(v).returning(questColumns).executeTakeFirstOrThrow();
}
export function findQuest(db: Executor, id: number) {
  return db.selectFrom('quests').select(questColumns).where('id', '=', id).executeTakeFirst();
}
export type QuestRow = NonNullable<Awaited<ReturnType<typeof findQuest>>>;
export function updateQuest(
  db: Executor,
  id: number,
  v: { title: string; description: string; metadata: Record<string, unknown> },
) {
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
  v: { questId: number; userId: number; status?: QuestStatus | undefined; progress?: number | undefined },
) {
  return db
    .insertInto('player_quests')
    .values({
      quest_id: v.questId,
      user_id: v.userId,
      status: v.status ?? 'active',
      progress: v.progress ?? 0,
    })
    .onConflict((oc) =>
      oc.columns(['user_id', 'quest_id']).doUpdateSet({
        ...(v.status !== undefined ? { status: v.status } : {}),
        ...(v.progress !== undefined ? { progress: v.progress } : {}),
        updated_at: now(),
      }),
    )
    .execute();
}

export function listPlayerQuests(db: Executor, userId: number, questId?: number) {
  let q = db
    .selectFrom('player_quests')
    .innerJoin('quests', 'quests.id', 'player_quests.quest_id')
    .select([
      'player_quests.quest_id',
      'quests.title',
      'player_quests.status',
      'player_quests.progress',
      'player_quests.updated_at',
    ])
    .where('player_quests.user_id', '=', userId);
  if (questId !== undefined) q = q.where('player_quests.quest_id', '=', questId);
  return q.orderBy('player_quests.updated_at', 'desc').orderBy('player_quests.quest_id').execute();
}
