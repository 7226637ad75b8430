import type { CreatedAt, Generated, Json, UpdatedAt } from '../../platform/db/schema.js';
import type { NpcTools } from './characters.tools.js';

export interface CharacterProfilesTable {
  user_id: number;
  description: string;
  persona_type: string | null;
  metadata: Json;
  emotions: Json<Record<string, number>>;
  config: Json;
  /** The card's tools (characters.tools.ts); null: none. */
  tools: Json<NpcTools | null>;
  is_assistant: Generated<boolean>;
  personality: Generated<string>;
  speaking_style: Generated<string>;
  goals: Json<string[]>;
  player_memory: Generated<PlayerMemory>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

/** Whether what the player tells a character is that character's alone or shared among the
 * characters set to `shared`. */
export type PlayerMemory = 'own' | 'shared';

export interface RelationshipsTable {
  user_id: number;
  npc_user_id: number;
  flags: Json<Record<string, boolean>>;
  affinity: number;
  updated_at: UpdatedAt;
}

export interface QuestsTable {
  id: Generated<number>;
  title: string;
  description: string;
  metadata: Json;
  objectives: Json<string[]>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export type QuestStatus = 'active' | 'completed' | 'failed';

export interface PlayerQuestsTable {
  quest_id: number;
  user_id: number;
  status: QuestStatus;
  progress: number;
  /** The objective the player is on (an index into the quest's objectives), or none. */
  step: number | null;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    character_profiles: CharacterProfilesTable;
    relationships: RelationshipsTable;
    quests: QuestsTable;
    player_quests: PlayerQuestsTable;
  }
}
