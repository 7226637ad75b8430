-- Uploaded files (POST /api/files/upload). An upload context groups the files of one request and
-- belongs to its uploader; a chat message naming it attaches them (the API contract). The bytes
-- live in the database so every API node sees them (ARCHITECTURE.md "Conventions" 10).

create table upload_contexts (
  id uuid primary key,
  user_id bigint not null references users (id) on delete cascade,
  created_at timestamptz not null default now()
);
create index upload_contexts_user on upload_contexts (user_id, created_at);

create table uploaded_files (
  id bigint generated always as identity primary key,
  upload_context_id uuid not null references upload_contexts (id) on delete cascade,
  position integer not null,
  name text not null,
  mime_type text not null,
  size integer not null,
  data bytea not null,
  created_at timestamptz not null default now(),
  constraint uploaded_files_size check (size >= 0 and size = octet_length(data)),
  constraint uploaded_files_position unique (upload_context_id, position)
);
