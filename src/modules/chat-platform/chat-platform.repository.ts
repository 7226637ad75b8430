// SQL only: chat-platform channel configuration.
import { dbNow, type Executor } from '../../platform/db/database.js';

const columns = ['channel_id', 'guild_id', 'protocol_id', 'created_at', 'updated_at'] as const;

export function findByChannel(db: Executor, channelId: string) {
  return db
    .selectFrom('chat_platform_channels')
    .select(columns)
    .where('channel_id', '=', channelId)
    .executeTakeFirst();
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
