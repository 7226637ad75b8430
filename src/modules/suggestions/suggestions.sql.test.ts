// The SQL of a generation pass and of the suggestion routes, snapshotted (sql/*.sql): a query
// change shows in review as a change of the file (`npx vitest run -u` rewrites it).
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as repo from './suggestions.repository.js';
import * as settings from './suggestions.settings.repository.js';

const at = new Date('2026-03-01T10:00:00.000Z');
const id = '00000000-0000-4000-8000-000000000001';

describe('suggestions repository SQL', () => {
  it("a pass's reads and writes, execution, history", async () => {
    const text = await sqlSnapshot({
      contextRows: (db) => repo.contextRows(db, 7, 'chan-1', ['A|x|-', 'B|y|-']),
      insertSuggestions: (db) =>
        repo.insertSuggestions(db, [
          {
            userId: 7,
            contextId: 'chan-1',
            key: 'SELECT_PROTOCOL|triage_support_v1|-',
            type: 'SELECT_PROTOCOL',
            message: 'm',
            confidence: 0.7,
            priority: 40,
            metadata: {},
            actions: [{ type: 'CANCEL', label: 'Dismiss', params: {} }],
            ttl: 3600,
            instanceId: null,
            channelId: 'chan-1',
            protocolId: null,
            state: null,
            stateVisit: null,
            createdAt: at,
          },
        ]),
      expire: (db) => repo.expire(db, [id], 'ttl'),
      findSuggestion: (db) => repo.findSuggestion(db, id, 7, 'chan-1'),
      claim: (db) => repo.claim(db, id, at, new Date(at.getTime() + 60_000)),
      updateSuggestion: (db) => repo.updateSuggestion(db, id, { status: 'declined' }, ['active']),
      openIds: (db) => repo.openIds(db, 7, 'chan-1'),
      history: (db) => repo.history(db, { channelId: 'chan-1', userId: 7, limit: 50 }),
      findConfig: (db) => settings.findConfig(db, 7),
      findContext: (db) => settings.findContext(db, 7, 'chan-1'),
      configAndBoundContexts: (db) => settings.configAndBoundContexts(db, 7, id),
    });
    await expect(text).toMatchFileSnapshot('./sql/suggestions.sql');
  });
});
