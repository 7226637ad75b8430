// The audit log (contract: "Admin zones"): the `audit_logs` table, the hook that notes every
// answered request (registered on the root app by app.ts, so it sees every route), and
// `GET /api/admin/logs`.
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../platform/db/database.js';
import { problemCodeOf } from '../../platform/http/problem.js';
import type { AppPlugin } from '../../platform/http/types.js';
import { auditRoutes } from './audit.routes.js';
import { AuditLog } from './audit.service.js';
import './audit.tables.js';

export { AuditLog, type AuditLogOptions } from './audit.service.js';

/** Notes each answered request once its response is sent (onResponse): nothing on its path. */
export function registerAuditLog(app: FastifyInstance, audit: AuditLog): void {
  app.addHook('onResponse', (req, reply, done) => {
    const p = req.principal;
    audit.note({
      method: req.method,
      url: req.url,
      route: req.routeOptions.url ?? null,
      status: reply.statusCode,
      problemCode: problemCodeOf(reply),
      principal: p ? { kind: p.kind, id: p.id } : null,
      requestId: req.id,
      ip: req.ip ?? null,
      durationMs: reply.elapsedTime,
    });
    done();
  });
}

/** The module's HTTP door (mounted by app.ts). */
export const auditPlugin: AppPlugin<{ audit: AuditLog }> = async (app, opts) => auditRoutes(app, opts);

/** Builds the audit log: noted after each response, written in batches behind it. */
export function createAuditLog(db: Db, log: Logger, config: Pick<Config, 'audit'>): AuditLog {
  return new AuditLog(db, log, {
    mode: config.audit.mode,
    retentionDays: config.audit.retentionDays,
    flushMs: 500,
    batchSize: 1000,
  });
}
