import type { CreatedAt, UpdatedAt } from '../../platform/db/schema.js';

export interface ChatPlatformChannelsTable {
  channel_id: string;
  guild_id: string | null;
  protocol_id: string;
  updated_by_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** A chat-platform user linked to an account (migration 0074). */
export interface ChatPlatformUsersTable {
  platform_user_id: string;
  user_id: number;
  linked_by_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    chat_platform_channels: ChatPlatformChannelsTable;
    chat_platform_users: ChatPlatformUsersTable;
  }
}
