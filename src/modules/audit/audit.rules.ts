// Pure rules of the audit log (contract: "Admin zones"): which requests are audited, the entry a
// request makes, and the list's cursor.

/** What the log is told of an answered request (nothing of its body, headers or tokens). */
export interface AnsweredRequest {
  method: string;
  /** The URL as received; only its path is kept. */
  url: string;
  route: string | null;
  status: number;
  problemCode: string | undefined;
  principal: { kind: 'user'; id: number } | { kind: 'apiKey'; id: number } | null;
  requestId: string;
  ip: string | null;
  durationMs: number;
}

export interface AuditEntry {
  at: Date;
  requestId: string;
  method: string;
  path: string;
  route: string | null;
  status: number;
  problemCode: string | null;
  actorUserId: number | null;
  actorKind: 'user' | 'api_key' | 'anonymous';
  apiKeyId: number | null;
  ip: string | null;
  durationMs: number;
}

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** Health checks and metrics are never audited, whatever they answer. */
const UNAUDITED = new Set(['/api/health', '/api/admin/health', '/metrics']);
const MAX_PATH = 2048;

/** The path of a URL: no query string, no fragment. */
export function pathOf(url: string): string {
  const end = url.search(/[?#]/);
  return (end === -1 ? url : url.slice(0, end)).slice(0, MAX_PATH);
}

/** Every request that is not a read, and every request answered 401, 403 or 5xx; never health
 * checks or metrics. `all`: every request (the audit mode `all`). */
export function shouldAudit(
  r: { method: string; path: string; status: number },
  mode: 'writes' | 'all',
): boolean {
  const path = r.path.length > 1 ? r.path.replace(/\/+$/, '') : r.path;
  if (UNAUDITED.has(path)) return false;
  if (mode === 'all') return true;
  return !READS.has(r.method.toUpperCase()) || r.status === 401 || r.status === 403 || r.status >= 500;
}

/** The row an audited request makes. */
export function entryOf(r: AnsweredRequest, at: Date): AuditEntry {
  const p = r.principal;
  return {
    at,
    requestId: r.requestId.slice(0, 100),
    method: r.method.toUpperCase().slice(0, 16),
    path: pathOf(r.url),
    route: r.route,
    status: r.status,
    problemCode: r.problemCode ?? null,
    actorUserId: p?.kind === 'user' ? p.id : null,
    actorKind: p === null ? 'anonymous' : p.kind === 'user' ? 'user' : 'api_key',
    apiKeyId: p?.kind === 'apiKey' ? p.id : null,
    ip: r.ip,
    durationMs: Math.round(r.durationMs * 1000) / 1000,
  };
}

/** A place in the newest-first list: the last row's time and id. */
export interface LogCursor {
  at: string;
  id: number;
}

export function encodeLogCursor(c: LogCursor): string {
  return Buffer.from(JSON.stringify([c.at, c.id])).toString('base64url');
}

export function decodeLogCursor(cursor: string): LogCursor | null {
  try {
    const v: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (!Array.isArray(v) || v.length !== 2) return null;
    const [at, id] = v as [unknown, unknown];
    if (typeof at !== 'string' || Number.isNaN(Date.parse(at))) return null;
    if (typeof id !== 'number' || !Number.isSafeInteger(id) || id < 1) return null;
    return { at, id };
  } catch {
    return null;
  }
}

/** A LIKE pattern matching every string that starts with `prefix`. */
export function prefixPattern(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
