// Persona sessions (contract: "Persona sessions") on the real server: create and resume, who may
// use an observer, the list and the history route's refusals. The chat turn in a session is the
// chat module's (chat.persona.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let cso: TestUser;
let alice: TestUser;
let bob: TestUser;
let observerId: number;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  alice = await createUser(t, 'public', { name: 'Alice' });
  bob = await createUser(t, 'public', { name: 'Bob' });
  const observer = await t.api('POST', '/api/admin/instances', {
    token: cso.accessToken,
    body: { name: 'Alice’s observer', level: 8, source: 'portal', userId: alice.id },
  });
  expect(observer.status).toBe(201);
  observerId = observer.body.id;
});
afterAll(() => t.close());

const createSession = (user: TestUser, body: Record<string, unknown>) =>
  t.api('POST', '/api/persona/session', { token: user.accessToken, body });

const history = (user: TestUser, query: string) =>
  t.api('GET', `/api/persona/chat/history?${query}`, { token: user.accessToken });

describe('POST /api/persona/session', () => {
  it('creates one session per user, observer and persona (201), and resumes it on a second create (200)', async () => {
    const first = await createSession(alice, { persona: 'Observer', observerId });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      persona: 'Observer',
      personaType: 'observer',
      observerId,
      userId: alice.id,
      conversationId: expect.any(Number),
      createdAt: expect.any(String),
      lastActiveAt: expect.any(String),
    });
    const again = await createSession(alice, { persona: 'Observer', observerId });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: first.body.id, conversationId: first.body.conversationId });
    expect(Date.parse(again.body.lastActiveAt)).toBeGreaterThanOrEqual(Date.parse(first.body.lastActiveAt));

    // Each persona its own session and conversation, with routing's persona type.
    const worker = await createSession(alice, { persona: 'Worker', observerId });
    const sister = await createSession(alice, { persona: 'Sister', observerId });
    expect([worker.status, sister.status]).toEqual([201, 201]);
    expect([worker.body.personaType, sister.body.personaType]).toEqual(['coder', 'sister']);
    expect(
      new Set([first.body.conversationId, worker.body.conversationId, sister.body.conversationId]).size,
    ).toBe(3);
  });

  it('resumes, not duplicates, when two creates race', async () => {
    const user = await createUser(t, 'cso');
    const answers = await Promise.all([1, 2, 3].map(() => createSession(user, { persona: 'Sister' })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 201]);
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
  });

  it('defaults to the root observer, and lets only a CSO, an admin or the owner use an observer', async () => {
    const root = await t.deps.services.timeline.rootObserverId();
    const asCso = await createSession(cso, { persona: 'Sister' });
    expect(asCso.status).toBe(201);
    expect(asCso.body.observerId).toBe(root);

    // Not the owner: 403, for an unknown id too (no oracle); the root belongs to nobody here.
    for (const [user, body] of [
      [bob, { persona: 'Sister', observerId }],
      [bob, { persona: 'Sister', observerId: 987654 }],
      [alice, { persona: 'Sister' }],
    ] as const) {
      const r = await createSession(user, body);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    // An allowed caller naming no Level-8 instance: 404.
    expect((await createSession(cso, { persona: 'Sister', observerId: 987654 })).status).toBe(404);
    const level5 = await t.api('POST', '/api/admin/instances', {
      token: cso.accessToken,
      body: { name: 'not an observer', level: 5, source: 'portal' },
    });
    expect((await createSession(cso, { persona: 'Sister', observerId: level5.body.id })).status).toBe(404);
  });

  it('refuses bad bodies and anonymous callers', async () => {
    for (const body of [
      {},
      { persona: 'Coder' },
      { persona: 'sister' },
      { persona: 'Sister', observerId: 'x' },
    ]) {
      const r = await createSession(alice, body);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    expect((await t.api('POST', '/api/persona/session', { body: { persona: 'Sister' } })).status).toBe(401);
    expect((await t.api('GET', '/api/persona/sessions')).status).toBe(401);
  });

  it("lists the caller's sessions, of one observer when asked", async () => {
    const mine = await t.api('GET', '/api/persona/sessions', { token: alice.accessToken });
    expect(mine.status).toBe(200);
    expect(mine.body.sessions.length).toBeGreaterThanOrEqual(3);
    expect(mine.body.sessions.every((s: any) => s.userId === alice.id && s.observerId === observerId)).toBe(
      true,
    );
    const root = await t.deps.services.timeline.rootObserverId();
    const none = await t.api('GET', `/api/persona/sessions?observerId=${root}`, { token: alice.accessToken });
    expect(none.body).toEqual({ sessions: [] });
    const others = await t.api('GET', '/api/persona/sessions', { token: bob.accessToken });
    expect(others.body).toEqual({ sessions: [] });
  });
});

describe('GET /api/persona/chat/history', () => {
  it('needs a sessionId (400); an unknown or another user’s session is 404', async () => {
    const sister = (await createSession(alice, { persona: 'Sister', observerId })).body;
    expect((await history(alice, '')).status).toBe(400);
    expect((await history(alice, 'sessionId=nope')).status).toBe(400);
    expect((await history(alice, `sessionId=${sister.id}&limit=0`)).status).toBe(400);
    const empty = await history(alice, `sessionId=${sister.id}`);
    expect(empty.body).toEqual({ sessionId: sister.id, persona: 'Sister', messages: [] });
    const unknown = await history(alice, 'sessionId=00000000-0000-4000-8000-000000000000');
    expect(unknown.status).toBe(404);
    const others = await history(bob, `sessionId=${sister.id}`);
    expect(others.status).toBe(404);
    expect(others.body.code).toBe('not_found');
  });
});
