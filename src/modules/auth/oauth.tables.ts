// Tables of external login, email verification and password reset (migration 0040; the mail
// outbox of the same migration is declared in src/platform/mail/mail.tables.ts).
import type { CreatedAt, Generated } from '../../platform/db/schema.js';
import type { ClientType } from '../../platform/security/identity.rules.js';

export interface OAuthFlowsTable {
  id: Generated<number>;
  state_hash: string;
  provider: string;
  code_verifier: string;
  nonce: string | null;
  browser_hash: string;
  client_type: ClientType;
  expires_at: Date;
  created_at: CreatedAt;
}

export interface OAuthLoginCodesTable {
  id: Generated<number>;
  code_hash: string;
  user_id: number;
  client_type: ClientType;
  expires_at: Date;
  used_at: Date | null;
  created_at: CreatedAt;
}

export interface UserIdentitiesTable {
  id: Generated<number>;
  user_id: number;
  provider: string;
  subject: string;
  email: string | null;
  created_at: CreatedAt;
  last_login_at: Generated<Date>;
}

export type AccountTokenPurpose = 'verify_email' | 'reset_password';

export interface AccountTokensTable {
  id: Generated<number>;
  purpose: AccountTokenPurpose;
  token_hash: string;
  user_id: number;
  email: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: CreatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    oauth_flows: OAuthFlowsTable;
    oauth_login_codes: OAuthLoginCodesTable;
    user_identities: UserIdentitiesTable;
    account_tokens: AccountTokensTable;
  }
}
