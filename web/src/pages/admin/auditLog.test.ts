import { describe, expect, it } from 'vitest';
import { actorLabel, auditQuery, NO_FILTERS } from './auditLog';

describe('the audit log’s filters', () => {
  it('leave empty filters out and send numbers and ISO times', () => {
    expect(auditQuery(NO_FILTERS)).toEqual({});
    const q = auditQuery({
      ...NO_FILTERS,
      method: 'PUT',
      status: '404',
      actorUserId: '7',
      from: '2025-01-01T10:00',
    });
    expect(q).toMatchObject({ method: 'PUT', status: 404, actorUserId: 7 });
    expect(q.from).toBe(new Date('2025-01-01T10:00').toISOString());
  });

  it('name the actor', () => {
    expect(actorLabel({ actorKind: 'user', actorUserId: 3, apiKeyId: null })).toBe('user 3');
    expect(actorLabel({ actorKind: 'api_key', actorUserId: null, apiKeyId: 9 })).toBe('API key 9');
    expect(actorLabel({ actorKind: 'anonymous', actorUserId: null, apiKeyId: null })).toBe('anonymous');
  });
});
