// The unified timeline (contract: "Observer"): who may read it, whose events it holds, cursor
// pages both ways under concurrent inserts, every filter and their combinations, full-text
// search (served by its index), numbered pages, and the summary.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, type Fixtures } from '../../../test/observer-fixtures.js';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import type { TimelineEvent } from '../timeline/index.js';

let t: TestApp;
let cso: TestUser;
let dev: TestUser;
let owner: TestUser;
let stranger: TestUser;
let f: Fixtures;

/** Observer A (owner's) with observer A1 below it; a Level-5 instance under each; observer B
 * (stranger's) with its own instance. */
let A: { id: number };
let A1: { id: number };
let a5: { id: number };
let a15: { id: number };
let B: { id: number };
let b5: { id: number };
/** Every event recorded in A's tree by `beforeAll`, and the one of B. */
let seeded: TimelineEvent[];
let ofB: TimelineEvent;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  dev = await createUser(t, 'developer');
  owner = await createUser(t, 'public');
  stranger = await createUser(t, 'public');
  f = fixtures(t, () => cso);
  A = await f.instance({ name: 'A', level: 8, source: 'portal', userId: owner.id });
  A1 = await f.instance({ name: 'A1', level: 8, source: 'portal', parentInstanceId: A.id });
  a5 = await f.instance({
    name: 'a5',
    level: 5,
    source: 'game_client',
    personaId: 3,
    parentInstanceId: A.id,
    userId: owner.id,
  });
  a15 = await f.instance({
    name: 'a15',
    level: 5,
    source: 'chat_platform',
    personaId: 4,
    parentInstanceId: A1.id,
  });
  B = await f.instance({ name: 'B', level: 8, source: 'portal', userId: stranger.id });
  b5 = await f.instance({ name: 'b5', level: 5, source: 'portal', parentInstanceId: B.id });
  const specs: [string, number | null, number | null, string][] = [
    ['quest_started', a5.id, owner.id, 'The harbour lights came on'],
    ['quest_started', a15.id, stranger.id, 'Lights over the HARBOUR, again'],
    ['diary_entry', a5.id, owner.id, 'Dear diary: the harbour was quiet'],
    ['trade', a15.id, null, 'Sold three lanterns'],
    ['trade', A1.id, owner.id, 'Observer A1 noted a trade'],
    ['note', A.id, null, 'A remembers the lighthouse'],
    ['diary_entry', a15.id, null, 'Lanterns and harbour lights'],
  ];
  for (const [eventType, instanceId, userId, eventText] of specs)
    await f.record({ eventType, instanceId, userId, eventText });
  ofB = await f.record({ eventType: 'quest_started', instanceId: b5.id, eventText: 'harbour lights in B' });
  // A's tree: the instance_created events of A, A1, a5 and a15, and the seven above.
  seeded = (await timeline(cso, A.id, { limit: 200 })).events;
});
afterAll(() => t.close());

function query(params: Record<string, string | number | string[] | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    for (const one of Array.isArray(v) ? v : [v]) q.append(k, String(one));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

async function timeline(
  user: TestUser,
  observerId: number,
  params: Record<string, string | number | string[] | undefined> = {},
): Promise<{ events: TimelineEvent[]; nextCursor: string | null }> {
  const r = await t.api('GET', `/api/observer/observer/${observerId}/timeline${query(params)}`, {
    token: user.accessToken,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
}

/** Every page of a query, following nextCursor; between pages `between` runs (concurrent writes). */
async function allPages(
  observerId: number,
  params: Record<string, string | number | string[] | undefined>,
  between: () => Promise<unknown> = async () => undefined,
): Promise<TimelineEvent[]> {
  const out: TimelineEvent[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages++) {
    const page = await timeline(cso, observerId, { ...params, cursor });
    out.push(...page.events);
    if (!page.nextCursor) return out;
    cursor = page.nextCursor;
    await between();
  }
  throw new Error('no end');
}

const ids = (events: TimelineEvent[]) => events.map((e) => e.id);
/** Newest first: by timelineAt, then id. */
const desc = (a: TimelineEvent, b: TimelineEvent) => b.timelineAt.localeCompare(a.timelineAt) || b.id - a.id;

describe('who may read an observer', () => {
  it('a CSO, an admin and the owner; 403 for others (unknown ids too), 404 for an allowed caller naming no observer', async () => {
    for (const user of [cso, dev, owner]) await timeline(user, A.id);
    const path = (id: number, rest = 'timeline') => `/api/observer/observer/${id}/${rest}`;
    const refused = await t.api('GET', path(A.id), { token: stranger.accessToken });
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body).toMatchObject({ code: 'forbidden' });
    expect((await t.api('GET', path(999_999), { token: stranger.accessToken })).status).toBe(403);
    expect((await t.api('GET', path(999_999), { token: cso.accessToken })).body).toMatchObject({
      code: 'not_found',
    });
    expect((await t.api('GET', path(a5.id), { token: cso.accessToken })).status).toBe(404);
    expect((await t.api('GET', path(A.id))).status).toBe(401);
    for (const rest of [
      'timeline/paginated',
      'summary',
      '5d-navigation/range',
      `5d-navigation/state?at=2026-01-01T00:00:00Z`,
      `5d-navigation/reconstruct?at=2026-01-01T00:00:00Z`,
    ])
      expect((await t.api('GET', path(A.id, rest), { token: stranger.accessToken })).status, rest).toBe(403);
    for (const rest of ['reflection', 'cycle'])
      expect((await t.api('POST', path(A.id, rest), { token: stranger.accessToken, body: {} })).status).toBe(
        403,
      );
  });
});

describe('the unified timeline', () => {
  it("holds the observer's events and those of the instances and observers below it, newest first", () => {
    expect(seeded).toHaveLength(4 + 7);
    expect([...seeded].sort(desc)).toEqual(seeded);
    expect(new Set(seeded.map((e) => e.observerId))).toEqual(new Set([A.id, A1.id]));
    expect(ids(seeded)).not.toContain(ofB.id);
  });

  it("the root's holds every event; a sub-observer's only its own part", async () => {
    const root = await t.deps.services.timeline.rootObserverId();
    const all = await allPages(root, { limit: 200 });
    expect(ids(all)).toEqual(expect.arrayContaining([...ids(seeded), ofB.id]));
    const a1 = await timeline(cso, A1.id, { limit: 200 });
    expect(a1.events.every((e) => e.observerId === A1.id)).toBe(true);
    expect(a1.events.length).toBeGreaterThan(0);
  });

  it('pages cover every event once, in both orders, while events are inserted between pages', async () => {
    const observer = await f.instance({ name: 'busy', level: 8, source: 'portal' });
    const child = await f.instance({
      name: 'busy child',
      level: 5,
      source: 'portal',
      parentInstanceId: observer.id,
    });
    for (let i = 0; i < 23; i++)
      await f.record({ eventType: 'tick', instanceId: child.id, eventText: `tick ${i}` });
    const before = await allPages(observer.id, { limit: 200 });
    expect(before).toHaveLength(25);

    for (const order of ['desc', 'asc'] as const) {
      const atStart = await allPages(observer.id, { limit: 200 });
      let inserted = 0;
      const insertTwo = async () => {
        // Two writers at once, each committing while the reader is between pages.
        if (inserted >= 20) return;
        inserted += 2;
        await Promise.all([
          f.record({ eventType: 'tock', instanceId: child.id, eventText: 'concurrent' }),
          f.record({ eventType: 'tock', instanceId: observer.id, eventText: 'concurrent' }),
        ]);
      };
      const seen = await allPages(observer.id, { limit: 4, order }, insertTwo);
      expect(inserted).toBeGreaterThanOrEqual(10);
      expect(new Set(ids(seen)).size, 'no event twice').toBe(seen.length);
      expect(ids(seen)).toEqual(expect.arrayContaining(ids(before)));
      const atEnd = await allPages(observer.id, { limit: 200 });
      // Newest first never reaches what was inserted after it started; oldest first reaches all
      // of it: each insert is newer than the page before it.
      if (order === 'desc') expect(ids(seen)).toEqual(ids(atStart));
      else expect(ids(seen)).toEqual(ids(atEnd).reverse());
    }
  });

  it('filters: event type, source and persona (repeated or comma-separated: any of), instance, user, time window', async () => {
    const expectFilter = async (
      params: Record<string, string | number | string[]>,
      keep: (e: TimelineEvent) => boolean,
    ) => {
      const got = await timeline(cso, A.id, { limit: 200, ...params });
      const want = seeded.filter(keep);
      expect(want.length, `${JSON.stringify(params)} selects something`).toBeGreaterThan(0);
      expect(ids(got.events), JSON.stringify(params)).toEqual(ids(want));
    };
    await expectFilter({ eventType: 'trade' }, (e) => e.eventType === 'trade');
    await expectFilter({ eventType: 'trade,note' }, (e) => ['trade', 'note'].includes(e.eventType));
    await expectFilter({ eventType: ['trade', 'diary_entry'] }, (e) =>
      ['trade', 'diary_entry'].includes(e.eventType),
    );
    await expectFilter({ source: 'chat_platform' }, (e) => e.source === 'chat_platform');
    await expectFilter({ source: ['game_client', 'chat_platform'] }, (e) =>
      ['game_client', 'chat_platform'].includes(e.source),
    );
    await expectFilter({ personaId: '3' }, (e) => e.personaId === 3);
    await expectFilter({ personaId: '3,4' }, (e) => e.personaId === 3 || e.personaId === 4);
    await expectFilter({ instanceId: a15.id }, (e) => e.instanceId === a15.id);
    await expectFilter({ userId: owner.id }, (e) => e.userId === owner.id);
    // Combinations: every filter applies.
    await expectFilter(
      { eventType: 'quest_started,diary_entry', personaId: '4' },
      (e) => ['quest_started', 'diary_entry'].includes(e.eventType) && e.personaId === 4,
    );
    await expectFilter(
      { source: 'game_client', userId: owner.id, eventType: 'diary_entry' },
      (e) => e.source === 'game_client' && e.userId === owner.id && e.eventType === 'diary_entry',
    );
    // The window: from inclusive, to exclusive, both on timelineAt.
    const oldest = [...seeded].reverse();
    const from = oldest[4]!.timelineAt;
    const to = oldest[8]!.timelineAt;
    await expectFilter({ from, to }, (e) => e.timelineAt >= from && e.timelineAt < to);
    await expectFilter(
      { from, to, eventType: 'trade' },
      (e) => e.timelineAt >= from && e.timelineAt < to && e.eventType === 'trade',
    );
    // An offset other than Z names the same instant.
    const plus2 = new Date(Date.parse(from) + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    await expectFilter({ from: plus2 }, (e) => e.timelineAt >= from);
    // Nothing matches: an empty page, no cursor.
    expect(await timeline(cso, A.id, { eventType: 'never' })).toEqual({ events: [], nextCursor: null });
  });

  it('a cursor keeps its filters: pages of a filtered timeline, oldest first', async () => {
    const want = seeded.filter((e) => e.eventType !== 'instance_created').reverse();
    const got = await allPages(A.id, {
      limit: 2,
      order: 'asc',
      eventType: 'quest_started,diary_entry,trade,note',
    });
    expect(ids(got)).toEqual(ids(want));
  });

  it('searches the event text: every word, any case, served by the full-text index', async () => {
    const search = async (q: string) => ids((await timeline(cso, A.id, { q, limit: 200 })).events);
    const texts = (q: string, keep: (text: string) => boolean) =>
      search(q).then((got) =>
        expect(got, q).toEqual(ids(seeded.filter((e) => keep(e.eventText.toLowerCase())))),
      );
    await texts('harbour', (s) => s.includes('harbour'));
    await texts('Harbour LIGHTS', (s) => s.includes('harbour') && s.includes('lights'));
    await texts('lanterns', (s) => s.includes('lanterns'));
    await texts('harbour -lights', (s) => s.includes('harbour') && !s.includes('lights'));
    expect(await search('nothing-like-this')).toEqual([]);
    expect(await search('!!!')).toEqual([]);
    // Search, filters and a window together.
    const got = await timeline(cso, A.id, { q: 'harbour', eventType: 'diary_entry', userId: owner.id });
    expect(got.events.map((e) => e.eventText)).toEqual(['Dear diary: the harbour was quiet']);

    // With sequential and plain index scans ruled out, the search still plans: the GIN index
    // on the text serves it.
    const plan = await t.deps.db.transaction().execute(async (trx) => {
      await sql`set local enable_seqscan = off`.execute(trx);
      await sql`set local enable_indexscan = off`.execute(trx);
      const r = await sql<{ 'QUERY PLAN': string }>`explain select id from timeline_events
        where text_search @@ websearch_to_tsquery('simple', 'harbour') order by timeline_at desc, id desc limit 51`.execute(
        trx,
      );
      return r.rows.map((row) => row['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('timeline_events_text_search');
    expect(plan).not.toContain('Seq Scan');
  });

  it('keeps no pending list on the full-text index: no insert merges one into it', async () => {
    // With GIN's `fastupdate`, the insert that overflows the pending list merges it (about 90 ms);
    // migration 0105 turns it off.
    const r = await sql<{ reloptions: string[] | null }>`select reloptions from pg_class
      where relname = 'timeline_events_text_search' and relnamespace = current_schema()::regnamespace`.execute(
      t.deps.db,
    );
    expect(r.rows).toEqual([{ reloptions: ['fastupdate=off'] }]);
  });

  it('refuses bad input with problem+json, naming the field', async () => {
    const bad = async (params: Record<string, string>, path: string) => {
      const r = await t.api('GET', `/api/observer/observer/${A.id}/timeline${query(params)}`, {
        token: cso.accessToken,
      });
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(r.body.code).toBe('validation_failed');
      expect(
        r.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(params),
      ).toContain(path);
    };
    await bad({ limit: '0' }, 'querystring.limit');
    await bad({ limit: '201' }, 'querystring.limit');
    await bad({ order: 'sideways' }, 'querystring.order');
    await bad({ q: 'x'.repeat(201) }, 'querystring.q');
    await bad({ from: '2026-01-01T00:00:00' }, 'querystring.from');
    await bad({ to: 'yesterday' }, 'querystring.to');
    await bad({ from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'querystring.from');
    await bad({ from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 'querystring.from');
    await bad({ personaId: '3,x' }, 'querystring.personaId.1');
    await bad({ instanceId: '-1' }, 'querystring.instanceId');
    await bad({ export: 'xml' }, 'querystring.export');
    await bad({ cursor: 'not a cursor' }, 'querystring.cursor');
    // A cursor of another query: other filters, another order, another observer.
    const page = await timeline(cso, A.id, { limit: 2, eventType: 'trade,note' });
    const cursor = page.nextCursor!;
    expect(cursor).toBeTruthy();
    await timeline(cso, A.id, { limit: 2, eventType: 'note,trade', cursor }); // the same filters
    await bad({ cursor, eventType: 'trade' }, 'querystring.cursor');
    await bad({ cursor, eventType: 'trade,note', order: 'asc' }, 'querystring.cursor');
    const other = await t.api(
      'GET',
      `/api/observer/observer/${A1.id}/timeline${query({ cursor, eventType: 'trade,note' })}`,
      { token: cso.accessToken },
    );
    expect(other.status).toBe(400);
  });
});

describe('numbered pages', () => {
  it('pages with the total, the same filters; past the end no events', async () => {
    const get = async (params: Record<string, string | number>) => {
      const r = await t.api('GET', `/api/observer/observer/${A.id}/timeline/paginated${query(params)}`, {
        token: owner.accessToken,
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body;
    };
    const first = await get({ pageSize: 4 });
    expect(first).toMatchObject({
      page: 1,
      pageSize: 4,
      total: seeded.length,
      totalPages: Math.ceil(seeded.length / 4),
    });
    const pages = [first.events];
    for (let page = 2; page <= first.totalPages; page++)
      pages.push((await get({ page, pageSize: 4 })).events);
    expect(ids(pages.flat())).toEqual(ids(seeded));
    expect(await get({ page: first.totalPages + 1, pageSize: 4 })).toMatchObject({
      events: [],
      total: seeded.length,
    });
    const trades = await get({ eventType: 'trade', q: 'trade' });
    expect(trades).toMatchObject({ total: 1, totalPages: 1 });
    expect(trades.events[0].eventText).toBe('Observer A1 noted a trade');
    const bad = await t.api('GET', `/api/observer/observer/${A.id}/timeline/paginated?pageSize=201`, {
      token: cso.accessToken,
    });
    expect(bad.status).toBe(400);
  });
});

describe('summary', () => {
  it("counts the observer's instances, its events in all and in the window, and diary compliance", async () => {
    const r = await t.api('GET', `/api/observer/observer/${A.id}/summary?hours=24`, {
      token: owner.accessToken,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const s = r.body;
    expect(s).toMatchObject({
      observerId: A.id,
      windowHours: 24,
      instances: {
        total: 3,
        active: 3,
        inactive: 0,
        byLevel: { '5': 2, '8': 1 },
        bySource: { portal: 1, game_client: 1, chat_platform: 1 },
        byPersona: { '3': 1, '4': 1, none: 1 },
      },
      events: {
        total: seeded.length,
        inWindow: seeded.length,
        byType: { instance_created: 4, quest_started: 2, diary_entry: 2, trade: 2, note: 1 },
        byLevel: { '8': 4, '5': 7 },
      },
      // a5 and a15 each have a diary entry in the window.
      diaryCompliance: { compliant: true, missingCount: 0, windowHours: 24 },
      metaState: {
        cycles: 0,
        lastCycleAt: null,
        lastReflectionId: null,
        awareness: { instances: 3, activeInstances: 3, eventsInWindow: seeded.length },
      },
    });
    expect(Date.parse(s.generatedAt)).toBeGreaterThan(0);
    // An active Level-5 instance without a diary entry breaks compliance; an inactive one rests.
    const quiet = await f.instance({ name: 'quiet', level: 5, source: 'portal', parentInstanceId: A1.id });
    const after = (await t.api('GET', `/api/observer/observer/${A.id}/summary`, { token: cso.accessToken }))
      .body;
    expect(after.diaryCompliance).toEqual({ compliant: false, missingCount: 1, windowHours: 24 });
    await t.api('PATCH', `/api/admin/instances/${quiet.id}`, {
      token: cso.accessToken,
      body: { isActive: false },
    });
    const rested = (await t.api('GET', `/api/observer/observer/${A.id}/summary`, { token: cso.accessToken }))
      .body;
    expect(rested.diaryCompliance).toMatchObject({ compliant: true, missingCount: 0 });
    expect(rested.instances).toMatchObject({ total: 4, active: 3, inactive: 1 });
    expect(
      (await t.api('GET', `/api/observer/observer/${A.id}/summary?hours=0`, { token: cso.accessToken }))
        .status,
    ).toBe(400);
  });
});

describe('OpenAPI', () => {
  it('documents every observer route with its query parameters', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    const base = '/api/observer/observer/{id}';
    for (const [path, method] of [
      ['/timeline', 'get'],
      ['/timeline/paginated', 'get'],
      ['/reflection', 'post'],
      ['/cycle', 'post'],
      ['/summary', 'get'],
      ['/5d-navigation/state', 'get'],
      ['/5d-navigation/reconstruct', 'get'],
      ['/5d-navigation/range', 'get'],
    ] as const)
      expect(doc.paths[base + path]?.[method], path).toBeDefined();
    const params = doc.paths[`${base}/timeline`].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(
      expect.arrayContaining(['eventType', 'source', 'personaId', 'instanceId', 'userId', 'q', 'from', 'to']),
    );
    expect(params).toEqual(expect.arrayContaining(['order', 'limit', 'cursor', 'export']));
    expect(doc.components.schemas.Reflection).toBeDefined();
    expect(doc.components.schemas.ObserverSummary).toBeDefined();
  });
});
