// A unit of work for the change feed's tests: its notices go to the flusher given (a feed's, or
// one that keeps them as PostgreSQL does until its listening connection delivers them), over a
// transaction that is never touched (a flusher that makes statements gets a real one instead).
import type { Transaction } from 'kysely';
import type { Database } from '../src/platform/db/schema.js';
import { UnitOfWork, UnitOfWorkRegistry, type Flusher } from '../src/platform/db/unit-of-work.js';
import '../src/platform/db/notifications.js';

export function noticeUnit(flush: Flusher<'notices'>, trx = {} as Transaction<Database>) {
  const registry = new UnitOfWorkRegistry();
  registry.define('notices', flush);
  const uow = new UnitOfWork(trx, registry);
  /** What the unit collected is written, then its after-commit work runs. */
  const commit = async () => {
    await uow.flush();
    uow.committed();
  };
  return { uow, commit };
}

/** A flusher that only keeps the payloads said: heard later, by the test's own hand. */
export function keptNotices(said: string[]): Flusher<'notices'> {
  return async (_uow, notices) => {
    said.push(...notices.map((n) => n.payload));
    return notices.map(() => undefined);
  };
}
