import type { CreatedAt, UpdatedAt } from '../../platform/db/schema.js';
import type { Persona } from './persona.rules.js';

/** A user's session with one persona of one observer (migration 0085). */
export interface PersonaSessionsTable {
  id: string;
  user_id: number;
  observer_id: number;
  persona: Persona;
  conversation_id: number;
  created_at: CreatedAt;
  last_active_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    persona_sessions: PersonaSessionsTable;
  }
}
