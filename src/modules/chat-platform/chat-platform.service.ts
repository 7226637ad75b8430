// Chat-platform channel configuration: a channel can carry a protocol id, which routing uses
// (spec "Protocols and routing": it overrides routing except for core_primary accounts).
import { isForeignKeyViolation } from '../../platform/db/errors.js';
import type { Db } from '../../platform/db/database.js';
import { notFound, validationFailed } from '../../platform/http/problem.js';
import * as repo from './chat-platform.repository.js';
import type { ChannelConfig } from './chat-platform.schemas.js';

type Row = NonNullable<Awaited<ReturnType<typeof repo.findByChannel>>>;

function toView(row: Row): ChannelConfig {
  return {
    channelId: row.channel_id,
    guildId: row.guild_id,
    protocolId: row.protocol_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

export class ChatPlatformService {
  constructor(private readonly db: Db) {}

  async getChannelConfig(channelId: string): Promise<ChannelConfig> {
    const row = await repo.findByChannel(this.db, channelId);
    if (!row) throw notFound('channel configuration');
    return toView(row);
  }

  /** The protocol id a channel carries, or null when the channel has no configuration. */
  async channelProtocolId(channelId: string): Promise<string | null> {
    return (await repo.findByChannel(this.db, channelId))?.protocol_id ?? null;
  }

  async setChannelConfig(
    input: { channelId: string; protocolId: string; guildId?: string | null | undefined },
    userId: number,
  ): Promise<ChannelConfig> {
    try {
      const row = await repo.upsert(this.db, {
        channelId: input.channelId,
        guildId: input.guildId ?? null,
        protocolId: input.protocolId,
        userId,
      });
      return toView(row);
    } catch (err) {
      // The foreign key is the existence check: no window between checking and writing.
      if (isForeignKeyViolation(err))
        throw validationFailed([{ path: 'protocolId', message: `no protocol ${input.protocolId} exists` }]);
      throw err;
    }
  }
}
