import type { CreatedAt, Generated, Json, UpdatedAt } from '../../platform/db/schema.js';

export interface ItemsTable {
  id: Generated<number>;
  name: string;
  description: string;
  type: string;
  metadata: Json;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface UserInventoryTable {
  id: Generated<number>;
  user_id: number;
  item_id: number;
  quantity: number;
  updated_at: UpdatedAt;
}

export type LedgerKind = 'currency' | 'item';

export interface EconomyLedgerTable {
  id: Generated<number>;
  user_id: number;
  kind: LedgerKind;
  item_id: number | null;
  delta: number;
  balance_before: number;
  balance_after: number;
  actor_user_id: number | null;
  actor_kind: string;
  reason: string;
  idempotency_key: string | null;
  timeline_event_id: number | null;
  created_at: CreatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    items: ItemsTable;
    user_inventory: UserInventoryTable;
    economy_ledger: EconomyLedgerTable;
  }
}
