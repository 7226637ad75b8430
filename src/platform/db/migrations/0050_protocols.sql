-- Interaction protocols (spec "Protocols and routing"). A record is string-based (a full prompt
-- template) or reference-based (a base protocol's template plus overrides); the definition is
-- kept as validated JSON. Ids carry a version suffix (spec "Versioning" 2): `family` is the id
-- without it, and routing uses the newest version of a routing family.

create table protocols (
  id text primary key,
  family text not null,
  version integer not null,
  name text not null,
  definition jsonb not null,
  builtin boolean not null default false,
  created_by_user_id bigint references users (id) on delete set null,
  updated_by_user_id bigint references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint protocols_id_versioned check (id ~ '^[a-z][a-z0-9_]*_v[1-9][0-9]*$'),
  constraint protocols_version_positive check (version > 0),
  constraint protocols_family_version unique (family, version)
);
