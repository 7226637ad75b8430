// The audit log (contract: "Admin zones"). Requests are noted after their response is sent and
// written in batches behind it: the first unwritten entry waits `flushMs` for others to share its
// INSERT, one flush at a time. A failed write is logged and its entries dropped: the log never
// fails, slows or holds up a request.
import type { Logger } from 'pino';
import type { Db } from '../../platform/db/database.js';
import { validationFailed } from '../../platform/http/problem.js';
import * as repo from './audit.repository.js';
import {
  decodeLogCursor,
  encodeLogCursor,
  entryOf,
  prefixPattern,
  shouldAudit,
  type AnsweredRequest,
  type AuditEntry,
} from './audit.rules.js';

export interface AuditLogOptions {
  /** `writes`: the contract's rule; `all`: every request but health and metrics; `off`: none. */
  mode: 'writes' | 'all' | 'off';
  retentionDays: number;
  /** How long the first unwritten entry waits for others to share its INSERT. */
  flushMs: number;
  /** Entries one INSERT takes at most; beyond it a flush starts at once. */
  batchSize: number;
}

export interface LogQuery {
  requestId?: string | undefined;
  actorUserId?: number | undefined;
  method?: string | undefined;
  status?: number | undefined;
  path?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** An entry as the list answers it. */
export type LogView = Omit<AuditEntry, 'at'> & { id: number; at: string };

export class AuditLog {
  private pending: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly opts: AuditLogOptions,
  ) {}

  /** Notes an answered request (called after its response was sent); never throws. */
  note(r: AnsweredRequest): void {
    if (this.opts.mode === 'off') return;
    try {
      if (!shouldAudit({ method: r.method, path: r.url.split('?')[0]!, status: r.status }, this.opts.mode))
        return;
      this.pending.push(entryOf(r, new Date(Date.now() - r.durationMs)));
      if (this.pending.length >= this.opts.batchSize) void this.flush();
      else this.timer ??= setTimeout(() => void this.flush(), this.opts.flushMs);
    } catch (err) {
      this.log.warn({ err }, 'could not note a request in the audit log');
    }
  }

  /** Writes what is noted (and waits for the writes under way). Never rejects. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending.splice(0);
    this.flushing = this.flushing.then(async () => {
      for (let i = 0; i < batch.length; i += this.opts.batchSize) {
        const part = batch.slice(i, i + this.opts.batchSize);
        try {
          await repo.insertMany(this.db, part);
        } catch (err) {
          this.log.warn({ err, entries: part.length }, 'audit log write failed; these entries are lost');
        }
      }
    });
    return this.flushing;
  }

  /** `GET /api/admin/logs`: newest first, by cursor. */
  async list(q: LogQuery): Promise<{ logs: LogView[]; nextCursor: string | null }> {
    let after;
    if (q.cursor !== undefined) {
      after = decodeLogCursor(q.cursor);
      if (!after)
        throw validationFailed([{ path: 'querystring.cursor', message: 'not a cursor of this list' }]);
    }
    if (q.from !== undefined && q.to !== undefined && Date.parse(q.from) >= Date.parse(q.to))
      throw validationFailed([{ path: 'querystring.from', message: 'from must be before to' }]);
    const rows = await repo.list(
      this.db,
      {
        requestId: q.requestId,
        actorUserId: q.actorUserId,
        method: q.method,
        status: q.status,
        pathPattern: q.path === undefined ? undefined : prefixPattern(q.path),
        from: q.from,
        to: q.to,
      },
      { limit: q.limit, after },
    );
    const page = rows.slice(0, q.limit);
    const last = page.at(-1);
    return {
      logs: page.map((r) => ({
        id: r.id,
        at: r.at.toISOString(),
        requestId: r.request_id,
        method: r.method,
        path: r.path,
        route: r.route,
        status: r.status,
        problemCode: r.problem_code,
        actorUserId: r.actor_user_id,
        actorKind: r.actor_kind,
        apiKeyId: r.api_key_id,
        ip: r.ip,
        durationMs: r.duration_ms,
      })),
      nextCursor:
        rows.length > q.limit && last ? encodeLogCursor({ at: last.at.toISOString(), id: last.id }) : null,
    };
  }

  /** The maintenance sweep: entries past `AUDIT_LOG_RETENTION_DAYS`. */
  sweep(): Promise<number> {
    return repo.deleteOlderThan(this.db, this.opts.retentionDays);
  }

  async close(): Promise<void> {
    await this.flush();
  }
}
