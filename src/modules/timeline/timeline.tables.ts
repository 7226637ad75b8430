import type { ColumnType } from 'kysely';
import type { CreatedAt, Generated, Json, UpdatedAt } from '../../platform/db/schema.js';

export type InstanceSource = 'portal' | 'chat_platform' | 'state_machine' | 'game_client';

export interface InstancesTable {
  id: Generated<number>;
  name: string;
  level: 5 | 8;
  persona_id: number | null;
  source: InstanceSource;
  parent_instance_id: number | null;
  state_machine_instance_id: string | null;
  channel_id: string | null;
  user_id: number | null;
  is_active: Generated<boolean>;
  last_seen_at: Date | null;
  metadata: Json;
  is_root: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface TimelineEventsTable {
  id: Generated<number>;
  user_id: number | null;
  event_type: string;
  event_text: string;
  source: string;
  instance_id: number | null;
  observer_id: number;
  persona_id: number | null;
  metadata: Json;
  occurred_at: Date | string;
  timeline_at: CreatedAt;
  /** `to_tsvector('simple', event_text)`, generated and stored (migration 0080); search only. */
  text_search: ColumnType<string, never, never>;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    instances: InstancesTable;
    timeline_events: TimelineEventsTable;
  }
}
