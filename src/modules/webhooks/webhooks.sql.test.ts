// The webhooks' SQL, snapshotted (sql/webhooks.sql; `npx vitest run -u` rewrites it): above all
// what the timeline hook adds to a recording transaction and what each attempt writes.
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as repo from './webhooks.repository.js';

const id = '00000000-0000-4000-8000-000000000001';
const hook = '00000000-0000-4000-8000-000000000002';

describe('webhooks repository SQL', () => {
  it('the hook’s statements, the delivery job’s and the log’s', async () => {
    const text = await sqlSnapshot({
      enabledEndpoints: (db) => repo.enabledEndpoints(db),
      insertDeliveries: (db) =>
        repo.insertDeliveries(db, [
          { id, webhookId: hook, eventId: 5, eventType: 'diary_entry', body: '{}' },
        ]),
      deliveryToSend: (db) => repo.deliveryToSend(db, id),
      recordAttempt: (db) =>
        repo.recordAttempt(db, id, { status: 'succeeded', statusCode: 200, error: null, durationMs: 12 }),
      failWithoutAttempt: (db) => repo.failWithoutAttempt(db, id, 'disabled'),
      listDeliveries: (db) =>
        repo.listDeliveries(db, { webhookId: hook, status: 'failed', limit: 50, offset: 0 }),
      sweepDeliveries: (db) => repo.sweepDeliveries(db, 30),
    });
    await expect(text).toMatchFileSnapshot('./sql/webhooks.sql');
  });
});
