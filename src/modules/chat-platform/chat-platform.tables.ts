import type { CreatedAt, UpdatedAt } from '../../platform/db/schema.js';

export interface ChatPlatformChannelsTable {
  channel_id: string;
  guild_id: string | null;
  protocol_id: string;
  updated_by_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    chat_platform_channels: ChatPlatformChannelsTable;
  }
}
