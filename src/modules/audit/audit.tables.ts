import type { Generated } from '../../platform/db/schema.js';

export type ActorKind = 'user' | 'api_key' | 'anonymous';

/** One audited request (migration 0095). */
export interface AuditLogsTable {
  id: Generated<number>;
  at: Date;
  request_id: string;
  method: string;
  path: string;
  route: string | null;
  status: number;
  problem_code: string | null;
  actor_user_id: number | null;
  actor_kind: ActorKind;
  api_key_id: number | null;
  ip: string | null;
  duration_ms: number;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    audit_logs: AuditLogsTable;
  }
}
