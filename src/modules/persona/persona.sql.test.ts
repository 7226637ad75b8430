// The persona sessions' SQL, snapshotted (sql/persona.sql; `npx vitest run -u` rewrites it).
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as repo from './persona.repository.js';

const id = '00000000-0000-4000-8000-000000000001';

describe('persona repository SQL', () => {
  it('sessions: create, resume, a turn’s read, list', async () => {
    const text = await sqlSnapshot({
      insertSession: (db) =>
        repo.insertSession(db, { id, userId: 7, observerId: 3, persona: 'Sister', conversationId: 4 }),
      touchSessionByPersona: (db) => repo.touchSession(db, 7, { observerId: 3, persona: 'Sister' }),
      touchSessionById: (db) => repo.touchSession(db, 7, { id }),
      findSession: (db) => repo.findSession(db, 7, id),
      listSessions: (db) => repo.listSessions(db, 7, 3),
    });
    await expect(text).toMatchFileSnapshot('./sql/persona.sql');
  });
});
