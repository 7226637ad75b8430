import type { CreatedAt, Json, UpdatedAt } from '../../platform/db/schema.js';
import type { ProtocolDefinition } from './protocols.schemas.js';

export interface ProtocolsTable {
  id: string;
  family: string;
  version: number;
  name: string;
  definition: Json<ProtocolDefinition>;
  builtin: boolean;
  created_by_user_id: number | null;
  updated_by_user_id: number | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    protocols: ProtocolsTable;
  }
}
