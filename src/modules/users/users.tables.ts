import type { CreatedAt, Generated, UpdatedAt } from '../../platform/db/schema.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';

export interface UsersTable {
  id: Generated<number>;
  email: string | null;
  password_hash: string | null;
  name: string;
  role: Generated<Role>;
  account_type: Generated<AccountType>;
  energy_coins: Generated<number>;
  email_verified: Generated<boolean>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    users: UsersTable;
  }
}
