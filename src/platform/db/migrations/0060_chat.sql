-- Conversations and their messages (chat turn, history, suggested replies).
create table conversations (
  id bigint generated always as identity primary key,
  user_id bigint not null references users (id) on delete cascade,
  title text not null default '',
  npc_user_ids bigint[] not null default '{}',
  is_default boolean not null default false,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index conversations_user on conversations (user_id, updated_at desc);
-- One default conversation with the assistant per user, even when two first messages race.
create unique index conversations_one_default on conversations (user_id) where is_default;

create table chat_messages (
  id bigint generated always as identity primary key,
  conversation_id bigint not null references conversations (id) on delete cascade,
  user_id bigint not null references users (id) on delete cascade,
  role text not null check (role in ('user', 'assistant')),
  npc_user_id bigint references users (id) on delete set null,
  text text not null,
  client_message_id text,
  -- user messages: received → answered | failed; assistant messages: answered
  status text not null default 'answered' check (status in ('received', 'answered', 'failed')),
  reply_to_id bigint references chat_messages (id) on delete cascade,
  metadata jsonb not null default '{}',
  created_at timestamptz not null default now()
);
create index chat_messages_conversation on chat_messages (conversation_id, id);
-- A retried chatMessage with the same clientMessageId is answered again, never stored twice.
create unique index chat_messages_client_id on chat_messages (user_id, client_message_id) where client_message_id is not null;
create index chat_messages_reply on chat_messages (reply_to_id) where reply_to_id is not null;
