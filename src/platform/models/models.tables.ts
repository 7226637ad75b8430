import type { CreatedAt, Generated } from '../db/schema.js';

export type ModelCallKind = 'chat' | 'stream' | 'embed' | 'vision';

export interface ModelCallsTable {
  id: Generated<number>;
  kind: ModelCallKind;
  purpose: string;
  provider: string;
  model: string;
  tokens_in: number;
  tokens_out: number;
  latency_ms: number;
  attempts: number;
  outcome: 'ok' | 'error';
  error: string | null;
  created_at: CreatedAt;
}

declare module '../db/schema.js' {
  interface Database {
    model_calls: ModelCallsTable;
  }
}
