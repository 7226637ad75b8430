-- Persona sessions (Observer, Sister, Worker): one per user, observer and persona, each with a
-- conversation of its own; the chat turn takes its routing persona type from here.
create table persona_sessions (
  id uuid primary key,
  user_id bigint not null references users (id) on delete cascade,
  observer_id bigint not null references instances (id) on delete cascade,
  persona text not null,
  conversation_id bigint not null references conversations (id) on delete cascade,
  created_at timestamptz not null default now(),
  last_active_at timestamptz not null default now(),
  constraint persona_sessions_persona check (persona in ('Observer', 'Sister', 'Worker'))
);
create unique index persona_sessions_one on persona_sessions (user_id, observer_id, persona);
