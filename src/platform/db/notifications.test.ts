// The PostgreSQL change feed (LISTEN/NOTIFY on a connection of its own): a notice reaches the
// listeners of its channel, and a feed closed while a LISTEN is on its way closes cleanly (the
// LISTEN's failure once went unhandled and failed the process's run).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../../test/eventually.js';
import { createTestApp, isPostgres } from '../../../test/harness.js';
import { noticeUnit } from '../../../test/notice-units.js';
import { noticeLater, PgChangeFeed } from './notifications.js';

describe.runIf(isPostgres())('PgChangeFeed', () => {
  it('hears a notice, and closes while a LISTEN is on its way', async () => {
    const t = await createTestApp();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const feed = new PgChangeFeed(t.databaseUrl!, `feed_test_${process.pid}`, pino({ level: 'silent' }));
      const heard: string[] = [];
      feed.listen('a', { onNotice: (p) => heard.push(p), onReset: () => undefined });
      await feed.ready();
      // Said by the feed's own flusher, in a transaction: heard once it committed.
      await t.deps.db.transaction().execute(async (trx) => {
        const { uow, commit } = noticeUnit(feed.flush, trx);
        void noticeLater(uow, 'a', 'hello');
        await commit();
      });
      await eventually(() => expect(heard).toEqual(['hello']));
      // A second channel's LISTEN goes out and the connection ends before it is answered.
      feed.listen('b', { onNotice: () => undefined, onReset: () => undefined });
      await feed.close();
      // Rejections are reported after a turn of the event loop.
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setTimeout(r, 0));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
      await t.close();
    }
  });
});
