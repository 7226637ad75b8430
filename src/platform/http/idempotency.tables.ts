// The idempotency keys of HTTP writes (idempotency.ts is their only reader and writer).
import type { CreatedAt, Json } from '../db/schema.js';

export interface IdempotencyKeysTable {
  scope: string;
  key: string;
  fingerprint: string;
  status_code: number | null;
  response: Json<unknown> | null;
  created_at: CreatedAt;
}

declare module '../db/schema.js' {
  interface Database {
    idempotency_keys: IdempotencyKeysTable;
  }
}
