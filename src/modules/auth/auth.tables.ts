import type { CreatedAt, Generated } from '../../platform/db/schema.js';
import type { ApiScope, ClientType } from '../../platform/security/identity.rules.js';

export interface RefreshTokensTable {
  id: Generated<number>;
  user_id: number;
  family_id: string;
  token_hash: string;
  client_type: ClientType;
  expires_at: Date;
  created_at: CreatedAt;
  used_at: Date | null;
  revoked_at: Date | null;
}

export interface ApiKeysTable {
  id: Generated<number>;
  name: string;
  prefix: string;
  key_hash: string;
  scopes: ApiScope[];
  created_by_user_id: number | null;
  created_at: CreatedAt;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    refresh_tokens: RefreshTokensTable;
    api_keys: ApiKeysTable;
  }
}
