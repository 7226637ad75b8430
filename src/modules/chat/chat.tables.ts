import type { CreatedAt, Generated, Json, UpdatedAt } from '../../platform/db/schema.js';

export interface ConversationsTable {
  id: Generated<number>;
  user_id: number;
  title: Generated<string>;
  npc_user_ids: Generated<number[]>;
  is_default: Generated<boolean>;
  /** A player's own thread with one character (migration 0110): at most one per pair. */
  direct_npc_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type MessageRole = 'user' | 'assistant';
export type MessageStatus = 'received' | 'answered' | 'failed';

export interface ChatMessagesTable {
  id: Generated<number>;
  conversation_id: number;
  user_id: number;
  role: MessageRole;
  npc_user_id: number | null;
  text: string;
  client_message_id: string | null;
  status: Generated<MessageStatus>;
  reply_to_id: number | null;
  metadata: Json;
  created_at: CreatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    conversations: ConversationsTable;
    chat_messages: ChatMessagesTable;
  }
}
