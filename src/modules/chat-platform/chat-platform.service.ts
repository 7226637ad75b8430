// Chat-platform channel configuration: a channel can carry a protocol id, which routing uses
// (spec "Protocols and routing": it overrides routing except for core_primary accounts). And the
// platform users linked to accounts, as whom commands sent with an API key act.
import { isForeignKeyViolation } from '../../platform/db/errors.js';
import type { Db } from '../../platform/db/database.js';
import { notFound, validationFailed } from '../../platform/http/problem.js';
import * as repo from './chat-platform.repository.js';
import type { ChannelConfig, PlatformUserLink } from './chat-platform.schemas.js';

type Row = NonNullable<Awaited<ReturnType<typeof repo.findByChannel>>>;
type LinkRow = NonNullable<Awaited<ReturnType<typeof repo.findLink>>>;

function toLink(row: LinkRow): PlatformUserLink {
  return {
    platformUserId: row.platform_user_id,
    userId: row.user_id,
    linkedByUserId: row.linked_by_user_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

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

  /** The channel a message routes by, when it has a configuration: its own, else (a thread) its
   * parent channel's; null when neither is configured. */
  async configuredChannel(channelId: string, parentChannelId: string | null): Promise<string | null> {
    const ids = parentChannelId ? [channelId, parentChannelId] : [channelId];
    const found = await repo.configured(this.db, ids);
    return ids.find((id) => found.includes(id)) ?? null;
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

  // ---- linked platform users -------------------------------------------------------------

  async getLink(platformUserId: string): Promise<PlatformUserLink> {
    const row = await repo.findLink(this.db, platformUserId);
    if (!row) throw notFound('linked platform user');
    return toLink(row);
  }

  /** The account a platform user is linked to, or null. */
  async linkedUserId(platformUserId: string): Promise<number | null> {
    return (await repo.findLink(this.db, platformUserId))?.user_id ?? null;
  }

  async listLinks(q: { userId?: number | undefined; limit: number; offset: number }) {
    const { rows, total } = await repo.listLinks(this.db, q);
    return { links: rows.map(toLink), total, limit: q.limit, offset: q.offset };
  }

  /** Links a platform user to an account, or relinks it; `created` tells which. */
  async putLink(
    platformUserId: string,
    userId: number,
    byUserId: number,
  ): Promise<{ link: PlatformUserLink; created: boolean }> {
    try {
      const row = await repo.upsertLink(this.db, { platformUserId, userId, linkedByUserId: byUserId });
      return { link: toLink(row), created: row.inserted };
    } catch (err) {
      if (isForeignKeyViolation(err))
        throw validationFailed([{ path: 'userId', message: `no user ${userId} exists` }]);
      throw err;
    }
  }

  async deleteLink(platformUserId: string): Promise<void> {
    if (!(await repo.deleteLink(this.db, platformUserId))) throw notFound('linked platform user');
  }
}
