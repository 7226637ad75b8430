// Reflections and the cycle (contract: "Observer"), through the fake model server (one call,
// what it was given, a failing model) and offline (the deterministic digest); the
// `reflection_generated` and `summary_update` events on `/observer`.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { fixtures, type Fixtures } from '../../../test/observer-fixtures.js';
import type { TimelineEvent } from '../timeline/index.js';
import { REFLECTION_SYSTEM } from './observer.rules.js';

let fake: FakeModelServer;
let t: TestApp;
let cso: TestUser;
let owner: TestUser;
let f: Fixtures;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(fake.env({ MODEL_MAX_RETRIES: '1', MODEL_RETRY_BASE_MS: '0' }));
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
  f = fixtures(t, () => cso);
});
afterAll(async () => {
  closeSockets();
  await t.close();
  await fake.close();
});

const post = (
  app: TestApp,
  user: TestUser,
  observerId: number,
  what: 'reflection' | 'cycle',
  body: unknown = {},
) => app.api('POST', `/api/observer/observer/${observerId}/${what}`, { token: user.accessToken, body });

/** An observer with a Level-5 instance, and the events recorded under it. */
async function observerWithEvents(fx: Fixtures, texts: [string, string][], ownerId = owner.id) {
  const observer = await fx.instance({ name: 'Watcher', level: 8, source: 'portal', userId: ownerId });
  const leaf = await fx.instance({
    name: 'leaf',
    level: 5,
    source: 'game_client',
    parentInstanceId: observer.id,
  });
  const events: TimelineEvent[] = [];
  for (const [eventType, eventText] of texts)
    events.push(await fx.record({ eventType, eventText, instanceId: leaf.id }));
  return { observer, leaf, events };
}

/** Moves an observer's events so far out of every window (they happened two days ago). */
const age = (app: TestApp, observerId: number) =>
  sql`update timeline_events set timeline_at = timeline_at - interval '48 hours' where observer_id = ${observerId}`.execute(
    app.deps.db,
  );

const reflectionEvents = (app: TestApp, observerId: number) =>
  app.deps.db
    .selectFrom('timeline_events')
    .select(['id', 'instance_id', 'metadata'])
    .where('observer_id', '=', observerId)
    .where('event_type', '=', 'reflection_generated')
    .execute();

const reflections = (app: TestApp, observerId: number) =>
  app.deps.services.memory.aboutObserver({
    observerId,
    upTo: new Date(Date.now() + 60_000).toISOString(),
    limit: 50,
    source: 'observer_reflection',
  });

describe('reflection (a model)', () => {
  it("one call over the window's newest events, oldest first; stored as a memory, an event and a socket event", async () => {
    const { observer, events } = await observerWithEvents(f, [
      ['quest_started', 'The first quest began'],
      ['trade', 'Sold a lantern'],
      ['reflection_generated', 'an earlier reflection, never reflected on'],
      ['quest_done', 'The quest ended well'],
      ['note', 'Harbour lights at dusk'],
    ]);
    const watcher = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId: observer.id },
    });
    fake.reset();
    fake.replyChat({ text: '  A calm day: one trade, one quest done.  ' });
    const r = await post(t, owner, observer.id, 'reflection', { hours: 24, limit: 3 });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    // The newest 3 of the window but the reflection: trade, quest_done, note.
    const used = [events[1]!, events[3]!, events[4]!];
    const reflection = r.body.reflection;
    expect(r.body.eventCount).toBe(3);
    expect(reflection).toEqual({
      memoryId: expect.any(Number),
      observerId: observer.id,
      text: 'A calm day: one trade, one quest done.',
      eventCount: 3,
      fromTimelineAt: used[0]!.timelineAt,
      toTimelineAt: used[2]!.timelineAt,
      offline: false,
      createdAt: expect.any(String),
    });

    // One call, given the system instructions and the three events in order.
    expect(fake.chatRequests()).toHaveLength(1);
    const messages = fake.chatRequests()[0]!.body.messages as { role: string; content: string }[];
    expect(messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(messages[0]!.content).toBe(REFLECTION_SYSTEM);
    const prompt = messages[1]!.content;
    const at = used.map((e) => prompt.indexOf(e.eventText));
    expect(at.every((i) => i > 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    expect(prompt).not.toContain('The first quest began');
    expect(prompt).not.toContain('earlier reflection');
    await t.deps.models.flush();
    const call = await t.deps.db
      .selectFrom('model_calls')
      .select(['purpose', 'outcome'])
      .where('kind', '=', 'chat')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(call).toEqual({ purpose: 'observer.reflection', outcome: 'ok' });

    // The memory: the assistant's, core tier, about the observer.
    const [memory] = await reflections(t, observer.id);
    expect(memory).toMatchObject({
      id: reflection.memoryId,
      userId: await t.deps.services.characters.assistantUserId(),
      content: reflection.text,
      source: 'observer_reflection',
      tier: 'assistant_core',
      metadata: {
        observerId: observer.id,
        eventCount: 3,
        fromTimelineAt: reflection.fromTimelineAt,
        toTimelineAt: reflection.toTimelineAt,
      },
      createdAt: reflection.createdAt,
    });
    const stored = await reflectionEvents(t, observer.id);
    expect(stored.at(-1)).toMatchObject({
      instance_id: observer.id,
      metadata: { memoryId: reflection.memoryId },
    });
    const sent = await watcher.next('reflection_generated');
    expect(sent.payload).toEqual(reflection);
    // The meta-state remembers it.
    const summary = (
      await t.api('GET', `/api/observer/observer/${observer.id}/summary`, { token: owner.accessToken })
    ).body;
    expect(summary.metaState).toMatchObject({
      cycles: 0,
      lastReflectionId: reflection.memoryId,
      lastReflectionAt: reflection.createdAt,
    });
  });

  it('no events in the window: 200 with a null reflection, and no call', async () => {
    const { observer } = await observerWithEvents(f, [['note', 'long ago']]);
    await age(t, observer.id);
    fake.reset();
    const r = await post(t, cso, observer.id, 'reflection', {});
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ reflection: null, eventCount: 0 });
    expect(fake.chatRequests()).toHaveLength(0);
    // A wider window reaches them.
    fake.replyChat({ text: 'Old news.' });
    const wide = await post(t, cso, observer.id, 'reflection', { hours: 72 });
    expect(wide.status).toBe(201);
    expect(wide.body.eventCount).toBe(3);
  });

  it('a failing model: 503 model_unavailable, nothing stored', async () => {
    const { observer } = await observerWithEvents(f, [['note', 'something happened']]);
    fake.reset();
    fake.failNext('chat', { status: 500, times: 2 });
    const r = await post(t, cso, observer.id, 'reflection');
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
    expect(r.body.code).toBe('model_unavailable');
    expect(fake.chatRequests()).toHaveLength(2);
    expect(await reflections(t, observer.id)).toEqual([]);
    expect(await reflectionEvents(t, observer.id)).toEqual([]);
  });

  it('refuses a bad body with problem+json', async () => {
    const { observer } = await observerWithEvents(f, []);
    for (const [body, path] of [
      [{ hours: 0 }, 'body.hours'],
      [{ hours: 721 }, 'body.hours'],
      [{ limit: 0 }, 'body.limit'],
      [{ limit: 201 }, 'body.limit'],
      [{ hours: 'a day' }, 'body.hours'],
      [{ extra: true }, 'body'],
    ] as const) {
      const r = await post(t, cso, observer.id, 'reflection', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors.map((e: { path: string }) => e.path).join(' '), JSON.stringify(body)).toContain(
        path,
      );
      expect((await post(t, cso, observer.id, 'cycle', body)).status).toBe(400);
    }
  });
});

describe('cycle', () => {
  it('a failing model fails the reflect step, not the request; meta_state runs and summary_update follows', async () => {
    const { observer } = await observerWithEvents(f, [
      ['note', 'first'],
      ['note', 'second'],
    ]);
    const watcher = await connectSocket(t.url, {
      namespace: '/observer',
      auth: { token: owner.accessToken, observerId: observer.id },
    });
    fake.reset();
    fake.failNext('chat', { status: 500, times: 2 });
    const failed = await post(t, owner, observer.id, 'cycle', { hours: 24 });
    expect(failed.status, JSON.stringify(failed.body)).toBe(200);
    expect(failed.body).toMatchObject({
      observerId: observer.id,
      outcome: 'failed',
      reflection: null,
      metaState: {
        cycles: 1,
        lastCycleOutcome: 'failed',
        lastReflectionId: null,
        awareness: { instances: 1, activeInstances: 1, eventsInWindow: 4 },
      },
    });
    expect(failed.body.steps.map((s: { name: string; outcome: string }) => [s.name, s.outcome])).toEqual([
      ['gather', 'ok'],
      ['reflect', 'failed'],
      ['store', 'skipped'],
      ['meta_state', 'ok'],
    ]);
    expect(failed.body.steps[1].detail).toContain('model_unavailable');
    expect(await reflections(t, observer.id)).toEqual([]);
    const update = await watcher.next('summary_update');
    expect(update.payload).toMatchObject({ observerId: observer.id, metaState: failed.body.metaState });
    const summary = (
      await t.api('GET', `/api/observer/observer/${observer.id}/summary`, { token: owner.accessToken })
    ).body;
    expect(update.payload).toEqual({ ...summary, generatedAt: update.payload.generatedAt });

    fake.replyChat({ text: 'Two notes, nothing more.' });
    const done = await post(t, owner, observer.id, 'cycle', {});
    expect(done.body.outcome).toBe('completed');
    expect(done.body.steps.map((s: { outcome: string }) => s.outcome)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(done.body.reflection).toMatchObject({
      text: 'Two notes, nothing more.',
      eventCount: 4,
      offline: false,
    });
    expect(done.body.metaState).toMatchObject({
      cycles: 2,
      lastCycleOutcome: 'completed',
      lastReflectionId: done.body.reflection.memoryId,
      lastReflectionAt: done.body.reflection.createdAt,
    });
    await watcher.next('reflection_generated', {
      match: (r) => r.memoryId === done.body.reflection.memoryId,
    });
    await watcher.next('summary_update', { match: (s) => s.metaState.cycles === 2 });
  });

  it('no events: reflect and store are skipped, the cycle completes', async () => {
    const { observer } = await observerWithEvents(f, [['note', 'long ago']]);
    await age(t, observer.id);
    fake.reset();
    const r = await post(t, cso, observer.id, 'cycle', { hours: 1 });
    expect(r.body).toMatchObject({ outcome: 'completed', reflection: null, metaState: { cycles: 1 } });
    expect(r.body.steps.map((s: { outcome: string }) => s.outcome)).toEqual([
      'ok',
      'skipped',
      'skipped',
      'ok',
    ]);
    expect(fake.chatRequests()).toHaveLength(0);
  });
});

describe('offline', () => {
  let offline: TestApp;
  let admin: TestUser;
  beforeAll(async () => {
    offline = await createTestApp();
    admin = await createUser(offline, 'cso');
  });
  afterAll(() => offline.close());

  it('the reflection is the deterministic digest, said to be one; the same events give the same text', async () => {
    const fx = fixtures(offline, () => admin);
    const { observer } = await observerWithEvents(
      fx,
      [
        ['trade', 'Sold a lantern'],
        ['trade', 'Bought rope'],
        ['note', 'Harbour lights at dusk'],
      ],
      admin.id,
    );
    const first = await post(offline, admin, observer.id, 'reflection');
    expect(first.status).toBe(201);
    const text: string = first.body.reflection.text;
    expect(first.body.reflection.offline).toBe(true);
    expect(text).toMatch(/^Offline digest \(no model was called\) of 5 events/);
    expect(text).toContain('By type: instance_created 2, trade 2, note 1.');
    expect(text).toContain('Harbour lights at dusk');
    // A reflection is never reflected on: the same window gives the same text.
    const again = await post(offline, admin, observer.id, 'reflection');
    expect(again.body.reflection.text).toBe(text);
    expect(again.body.reflection.memoryId).not.toBe(first.body.reflection.memoryId);
    const cycle = await post(offline, admin, observer.id, 'cycle');
    expect(cycle.body).toMatchObject({ outcome: 'completed', reflection: { text, offline: true } });
  });
});
