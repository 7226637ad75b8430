import type { Generated, Json } from '../../platform/db/schema.js';

/** An observer's meta-state (migration 0081): its cycles and its latest reflection. */
export interface ObserverMetaStatesTable {
  observer_id: number;
  cycles: Generated<number>;
  last_cycle_at: Date | null;
  last_cycle_outcome: 'completed' | 'failed' | null;
  last_reflection_id: number | null;
  last_reflection_at: Date | null;
  awareness: Json<Awareness> | null;
  updated_at: Generated<Date>;
}

/** What an observer's last cycle saw. */
export interface Awareness {
  instances: number;
  activeInstances: number;
  eventsInWindow: number;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    observer_meta_states: ObserverMetaStatesTable;
  }
}
