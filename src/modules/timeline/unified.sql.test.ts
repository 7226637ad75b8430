// The SQL of an observer's unified timeline, snapshotted (sql/unified.sql): the page of the root
// (every event), of one observer and of a tree, with every filter; the export and its probe; the
// state at a time; the users an observer concerns. A query change shows in review as a change of
// the file (`npx vitest run -u`).
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as repo from './unified.repository.js';

const all = { all: true } as const;
const one = { all: false, observerIds: [3] } as const;
const tree = { all: false, observerIds: [3, 8, 9] } as const;
const filters = {
  eventTypes: ['trade', 'note'],
  sources: ['game_client'],
  personaIds: [2],
  instanceId: 5,
  userId: 42,
  q: 'harbour lights',
  from: '2025-05-01T00:00:00Z',
  to: '2025-05-02T00:00:00Z',
};
const after = { at: '2025-05-01T09:30:00.123456Z', id: 901 };
const at = '2025-05-01T12:00:00Z';

describe('unified timeline SQL', () => {
  it('pages, exports and the state at a time', async () => {
    const text = await sqlSnapshot({
      'eventPage (root, first page)': (db) => repo.eventPage(db, all, {}, { order: 'desc', limit: 50 }),
      'eventPage (one observer, after a cursor, oldest first)': (db) =>
        repo.eventPage(db, one, {}, { order: 'asc', limit: 50, after }),
      'eventPage (a tree, every filter)': (db) =>
        repo.eventPage(db, tree, filters, { order: 'desc', limit: 50, after }),
      'eventOffsetPage and countMatching': async (db) => {
        await repo.eventOffsetPage(db, one, { q: 'harbour' }, { order: 'desc', limit: 50, offset: 100 });
        await repo.countMatching(db, one, { q: 'harbour' });
      },
      'exportQuery and beyondQuery': async (db) => {
        await repo.exportQuery(db, one, filters, 'asc', 10_000).execute();
        await repo.beyondQuery(db, one, filters, 10_000).execute();
      },
      'instancesAsOf (an observer, the root)': async (db) => {
        await repo.instancesAsOf(db, 3, { root: false, at });
        await repo.instancesAsOf(db, 1, { root: true, at });
      },
      'eventsUpTo and extent': async (db) => {
        await repo.eventsUpTo(db, one, at, 20);
        await repo.extent(db, one, at);
      },
      windowBreakdown: (db) => repo.windowBreakdown(db, tree, at),
      withoutDiary: (db) => repo.withoutDiary(db, [5, 6], at),
      usersConcerned: (db) => repo.usersConcerned(db, 3, tree.observerIds, [42, 43]),
    });
    await expect(text).toMatchFileSnapshot('./sql/unified.sql');
  });
});
