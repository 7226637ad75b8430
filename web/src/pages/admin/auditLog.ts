// The audit log's filters as the admin zone takes them, and an entry's actor in words. Pure:
// tested alone.
import type { Schemas } from '../../api/client';

export interface AuditFilters {
  method: string;
  status: string;
  path: string;
  actorUserId: string;
  requestId: string;
  from: string;
  to: string;
}

export const NO_FILTERS: AuditFilters = {
  method: '',
  status: '',
  path: '',
  actorUserId: '',
  requestId: '',
  from: '',
  to: '',
};

/** The filters as the query the API takes (empty ones left out; local date-times as ISO). */
export function auditQuery(f: AuditFilters) {
  return {
    ...(f.method ? { method: f.method } : {}),
    ...(f.status ? { status: Number(f.status) } : {}),
    ...(f.path ? { path: f.path } : {}),
    ...(f.actorUserId ? { actorUserId: Number(f.actorUserId) } : {}),
    ...(f.requestId ? { requestId: f.requestId } : {}),
    ...(f.from ? { from: new Date(f.from).toISOString() } : {}),
    ...(f.to ? { to: new Date(f.to).toISOString() } : {}),
  };
}

/** Who made the request: a user, an API key, or nobody signed in. */
export function actorLabel(
  e: Pick<Schemas['AuditLogEntry'], 'actorKind' | 'actorUserId' | 'apiKeyId'>,
): string {
  if (e.actorKind === 'user') return `user ${e.actorUserId}`;
  if (e.actorKind === 'api_key') return `API key ${e.apiKeyId}`;
  return 'anonymous';
}
