// SQL only: chat-platform channel configuration.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';

const columns = ['channel_id', 'guild_id', 'protocol_id', 'created_at', 'updated_at'] as const;

export function findByChannel(db: Executor, channelId: string) {
  return db
    .selectFrom('chat_platform_channels')
    .select(columns)
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
}

/** Which of these channels have a configuration. */
export async function configured(db: Executor, channelIds: readonly string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('chat_platform_channels')
    .select('channel_id')
    .where('channel_id', 'in', channelIds)
    .execute();
  return rows.map((r) => r.channel_id);
}

export function upsert(
  db: Executor,
  v: { channelId: string; guildId: string | null; protocolId: string; userId: number },
) {
  return db
    .insertInto('chat_platform_channels')
    .values({
      channel_id: v.channelId,
      guild_id: v.guildId,
      protocol_id: v.protocolId,
      updated_by_user_id: v.userId,
    })
    .onConflict((oc) =>
      oc.column('channel_id').doUpdateSet({
        guild_id: v.guildId,
        protocol_id: v.protocolId,
        updated_by_user_id: v.userId,
        updated_at: dbNow(),
      }),
    )
    .returning(columns)
    .executeTakeFirstOrThrow();
}

// ---- linked platform users ------------------------------------------------------------------

const linkColumns = ['platform_user_id', 'user_id', 'linked_by_user_id', 'created_at', 'updated_at'] as const;

export function findLink(db: Executor, platformUserId: string) {
  return db
    .selectFrom('chat_platform_users')
    .select(linkColumns)
    .where('platform_user_id', '=', platformUserId)
    .executeTakeFirst();
}

export async function listLinks(
  db: Executor,
  p: { userId?: number | undefined; limit: number; offset: number },
) {
  let rows = db.selectFrom('chat_platform_users').select(linkColumns);
  let count = db.selectFrom('chat_platform_users').select((eb) => eb.fn.countAll<number>().as('n'));
  if (p.userId !== undefined) {
    rows = rows.where('user_id', '=', p.userId);
    count = count.where('user_id', '=', p.userId);
  }
  const [list, total] = await Promise.all([
    rows.orderBy('platform_user_id').limit(p.limit).offset(p.offset).execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  return { rows: list, total: Number(total.n) };
}

/** Links (or relinks) a platform user; `inserted` tells which. */
export async function upsertLink(
  db: Executor,
  v: { platformUserId: string; userId: number; linkedByUserId: number },
) {
  const row = await db
    .insertInto('chat_platform_users')
    .values({ platform_user_id: v.platformUserId, user_id: v.userId, linked_by_user_id: v.linkedByUserId })
    .onConflict((oc) =>
      oc.column('platform_user_id').doUpdateSet({
        user_id: v.userId,
        linked_by_user_id: v.linkedByUserId,
        updated_at: dbNow(),
      }),
    )
    .returning([...linkColumns, sql<boolean>`xmax = 0`.as('inserted')])
    .executeTakeFirstOrThrow();
  return row;
}

export async function deleteLink(db: Executor, platformUserId: string): Promise<boolean> {
  const r = await db
    .deleteFrom('chat_platform_users')
    .where('platform_user_id', '=', platformUserId)
    .executeTakeFirst();
  return r.numDeletedRows > 0n;
}
