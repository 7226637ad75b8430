// The unit of work (unit-of-work.ts) on the service's own database: after-commit work only for a
// commit, one statement per kind and flush, a subscriber's failure rolling the unit back, the
// change notices said in one statement and heard only once committed.
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../../../test/harness.js';
import { transaction } from './database.js';
import { UnitOfWork, UnitOfWorkRegistry, unitOfWorkRegistry } from './unit-of-work.js';
import { enqueueLater } from '../jobs/later.js';
import pino from 'pino';
import { eventually } from '../../../test/eventually.js';
import { LocalChangeFeed, noticeLater, PgChangeFeed } from './notifications.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

/** Counts the statements sent on a transaction's connection. */
function counted() {
  const seen: string[] = [];
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => (seen.push(args.queryId.queryId), args.result),
  };
  return { seen, plugin };
}

describe('unit of work', () => {
  it('runs after-commit work once committed, never for a rollback', async () => {
    const seen: string[] = [];
    const timeline = t.deps.services.timeline;
    await transaction(t.deps.db, async (uow) => {
      void timeline.record(uow, { eventType: 'uow_probe', eventText: 'kept' });
      uow.afterCommit(() => seen.push('committed'));
      expect(seen).toEqual([]);
    });
    expect(seen).toEqual(['committed']);
    await expect(
      transaction(t.deps.db, async (uow) => {
        await timeline.record(uow, { eventType: 'uow_probe', eventText: 'rolled back' });
        uow.afterCommit(() => seen.push('rolled back'));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(seen).toEqual(['committed']);
    const stored = await timeline.list({ eventType: 'uow_probe', limit: 10 });
    expect(stored.map((e) => e.eventText)).toEqual(['kept']);
  });

  it('writes each kind a flush holds in one statement: the events in one insert, the jobs in another', async () => {
    const { seen, plugin } = counted();
    const timeline = t.deps.services.timeline;
    const events = await transaction(t.deps.db, async ({ trx }) => {
      const uow = new UnitOfWork(trx.withPlugin(plugin), unitOfWorkRegistry(t.deps.db));
      const added = Array.from({ length: 5 }, (_, i) =>
        timeline.record(uow, { eventType: 'uow_batch_probe', eventText: `event ${i}` }),
      );
      for (let i = 0; i < 5; i++)
        void enqueueLater(uow, 'webhooks.deliver', { deliveryId: crypto.randomUUID() });
      expect(seen).toEqual([]);
      await uow.flush();
      return Promise.all(added);
    });
    // The events' insert and the jobs' (the root observer and its chain were read by the test
    // before, and are kept per process).
    expect(seen).toHaveLength(2);
    expect(events.map((e) => e.eventText)).toEqual([0, 1, 2, 3, 4].map((i) => `event ${i}`));
    expect(events.map((e) => e.id)).toEqual([...events.map((e) => e.id)].sort((a, b) => a - b));
  });

  it('rolls the unit back when a subscriber of its flush fails', async () => {
    const timeline = t.deps.services.timeline;
    const registry = unitOfWorkRegistry(t.deps.db);
    let failing = true;
    registry.onFlush('timeline', async (_uow, events) => {
      if (failing && events.some((e) => e.eventType === 'uow_subscriber_probe'))
        throw new Error('subscriber failed');
    });
    const seen: string[] = [];
    await expect(
      transaction(t.deps.db, async (uow) => {
        void timeline.record(uow, { eventType: 'uow_subscriber_probe' });
        uow.afterCommit(() => seen.push('committed'));
      }),
    ).rejects.toThrow('subscriber failed');
    failing = false;
    expect(seen).toEqual([]);
    expect(await timeline.list({ eventType: 'uow_subscriber_probe', limit: 5 })).toEqual([]);
  });

  it("says a flush's notices in one statement, heard once the unit committed", async () => {
    const feed = t.databaseUrl
      ? new PgChangeFeed(t.databaseUrl, `uow_test_${process.pid}`, pino({ level: 'silent' }))
      : new LocalChangeFeed();
    const registry = new UnitOfWorkRegistry();
    registry.define('notices', feed.flush);
    const heard: string[] = [];
    feed.listen('probe', { onNotice: (payload) => heard.push(payload), onReset: () => undefined });
    if (feed instanceof PgChangeFeed) await feed.ready();
    /** A unit on the feed's registry, committed (its after-commit work run) unless `fail`. */
    const write = async (payloads: string[], fail = false) => {
      const { seen, plugin } = counted();
      const uow = await transaction(t.deps.db, async ({ trx }) => {
        const unit = new UnitOfWork(trx.withPlugin(plugin), registry);
        for (const p of payloads) void noticeLater(unit, 'probe', p);
        await unit.flush();
        if (fail) throw new Error('roll back');
        return unit;
      });
      uow.committed();
      return seen.length;
    };
    try {
      expect(await write(['one', 'two'])).toBe(feed instanceof PgChangeFeed ? 1 : 0);
      await eventually(() => expect([...heard].sort()).toEqual(['one', 'two']));
      await expect(write(['rolled back'], true)).rejects.toThrow('roll back');
      await write(['after']);
      await eventually(() => expect(heard).toContain('after'));
      expect(heard).not.toContain('rolled back');
    } finally {
      await feed.close();
    }
  });
});
