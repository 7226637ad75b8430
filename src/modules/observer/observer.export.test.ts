// Timeline exports (contract: "Observer"): RFC 4180 CSV (quoting, newlines, the formula guard,
// nulls), JSON, filters, truncation at 10,000 events, and rows streamed from a database cursor a
// batch at a time: asserted on the rows read against the rows taken, never on time.
import http from 'node:http';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtures, parseCsv, type Fixtures } from '../../../test/observer-fixtures.js';
import {
  createTestApp,
  createUser,
  eventually,
  isPostgres,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import type { UserPrincipal } from '../../platform/http/auth.js';
import type { TimelineEvent } from '../timeline/index.js';
import { exportStream } from './observer.export.js';
import { CSV_COLUMNS } from './observer.rules.js';
import { timelineQuery } from './observer.schemas.js';

let t: TestApp;
let cso: TestUser;
let owner: TestUser;
let f: Fixtures;
let small: { id: number };
let big: { id: number };
let events: TimelineEvent[];

const BIG = 10_050;

beforeAll(async () => {
  t = await createTestApp();
  cso = await createUser(t, 'cso');
  owner = await createUser(t, 'public');
  f = fixtures(t, () => cso);
  small = await f.instance({ name: 'small', level: 8, source: 'portal', userId: owner.id });
  const leaf = await f.instance({
    name: 'leaf',
    level: 5,
    source: 'game_client',
    personaId: 9,
    parentInstanceId: small.id,
  });
  const texts: [string, string][] = [
    ['note', 'plain text'],
    ['note', 'has, a comma'],
    ['note', 'has "quotes" inside'],
    ['note', 'line one\nline two'],
    ['note', 'crlf\r\nline'],
    ['note', '=SUM(A1:A2)'],
    ['note', '+1 more'],
    ['note', '-1 less'],
    ['note', '@mention'],
    ['=cmd', 'a type that starts like a formula'],
    ['note', ''],
  ];
  for (const [eventType, eventText] of texts) await f.record({ eventType, eventText, instanceId: leaf.id });
  await f.record({ eventType: 'note', eventText: 'by someone', instanceId: small.id, userId: owner.id });
  events = (
    await t.api('GET', `/api/observer/observer/${small.id}/timeline?limit=200&order=asc`, {
      token: owner.accessToken,
    })
  ).body.events;
  big = await f.instance({ name: 'big', level: 8, source: 'portal' });
  await f.bulk(BIG, { observerId: big.id, text: (i) => `bulk event ${i}, with a comma` });
});
afterAll(() => t.close());

const principal = (): UserPrincipal => ({
  kind: 'user',
  id: cso.id,
  role: 'cso',
  accountType: 'public',
  name: 'cso',
  admin: true,
  jti: 'test',
  exp: Math.floor(Date.now() / 1000) + 3600,
  sid: undefined,
  clientType: undefined,
});

const exportPath = (id: number, query: string) => `/api/observer/observer/${id}/timeline?${query}`;

describe('CSV export', () => {
  it('RFC 4180: header, CRLF, quoting, newlines kept inside quotes, nulls empty, compact metadata, the formula guard', async () => {
    const r = await t.api('GET', exportPath(small.id, 'export=csv&order=asc'), { token: owner.accessToken });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(r.headers.get('content-disposition')).toBe(
      `attachment; filename="observer-${small.id}-timeline.csv"`,
    );
    expect(r.headers.get('x-export-truncated')).toBe('false');
    expect(r.text.startsWith(`${CSV_COLUMNS.join(',')}\r\n`)).toBe(true);
    const [header, ...rows] = parseCsv(r.text);
    expect(header).toEqual([...CSV_COLUMNS]);
    expect(rows).toHaveLength(events.length);
    const guard = (s: string) => (/^[=+\-@]/.test(s) ? `'${s}` : s);
    rows.forEach((row, i) => {
      const e = events[i]!;
      expect(row).toEqual([
        String(e.id),
        e.timelineAt,
        e.occurredAt,
        guard(e.eventType),
        e.source,
        e.instanceId === null ? '' : String(e.instanceId),
        String(e.observerId),
        e.personaId === null ? '' : String(e.personaId),
        e.userId === null ? '' : String(e.userId),
        guard(e.eventText),
        JSON.stringify(e.metadata),
      ]);
    });
    const byText = (text: string) => rows.find((row) => row[9] === text);
    expect(byText("'=SUM(A1:A2)")).toBeDefined();
    expect(byText("'+1 more")).toBeDefined();
    expect(byText("'-1 less")).toBeDefined();
    expect(byText("'@mention")).toBeDefined();
    expect(rows.find((row) => row[3] === "'=cmd")).toBeDefined();
    // The bytes themselves: fields with a comma, a quote or a line break are quoted, quotes doubled.
    expect(r.text).toContain(',"has, a comma",');
    expect(r.text).toContain(',"has ""quotes"" inside",');
    expect(r.text).toContain(',"line one\nline two",');
    expect(r.text).toContain(',"crlf\r\nline",');
    expect(r.text).toContain(",'=SUM(A1:A2),");
    expect(r.text.endsWith('\r\n')).toBe(true);
  });

  it('applies the filters and the order', async () => {
    const r = await t.api('GET', exportPath(small.id, `export=csv&eventType=note&userId=${owner.id}`), {
      token: owner.accessToken,
    });
    const [, ...rows] = parseCsv(r.text);
    expect(rows.map((row) => row[9])).toEqual(['by someone']);
    const desc = parseCsv(
      (await t.api('GET', exportPath(small.id, 'export=csv&q=line'), { token: cso.accessToken })).text,
    );
    expect(desc.slice(1).map((row) => row[9])).toEqual(['crlf\r\nline', 'line one\nline two']);
  });
});

describe('JSON export', () => {
  it('{ observerId, exportedAt, truncated, events } in order, as an attachment', async () => {
    const r = await t.api('GET', exportPath(small.id, 'export=json'), { token: owner.accessToken });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(r.headers.get('content-disposition')).toBe(
      `attachment; filename="observer-${small.id}-timeline.json"`,
    );
    expect(r.headers.get('x-export-truncated')).toBe('false');
    expect(r.body).toEqual({
      observerId: small.id,
      exportedAt: expect.any(String),
      truncated: false,
      events: [...events].reverse(),
    });
    const empty = await t.api('GET', exportPath(small.id, 'export=json&eventType=never'), {
      token: cso.accessToken,
    });
    expect(empty.body).toMatchObject({ truncated: false, events: [] });
    // Refusals come before any byte of an export.
    const refused = await t.api('GET', exportPath(small.id, 'export=json&from=x'), {
      token: cso.accessToken,
    });
    expect(refused.status).toBe(400);
  });
});

describe('10,000 events', () => {
  it('exports the first 10,000 of 10,050 over HTTP, X-Export-Truncated: true', async () => {
    const r = await t.api('GET', exportPath(big.id, 'export=csv&order=asc&eventType=bulk'), {
      token: cso.accessToken,
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-export-truncated')).toBe('true');
    const [, ...rows] = parseCsv(r.text);
    expect(rows).toHaveLength(10_000);
    expect(rows[0]![9]).toBe('bulk event 0, with a comma');
    expect(rows.at(-1)![9]).toBe('bulk event 9999, with a comma');
    const json = await t.api('GET', exportPath(big.id, 'export=json&eventType=bulk'), {
      token: cso.accessToken,
    });
    expect(json.body.truncated).toBe(true);
    expect(json.body.events).toHaveLength(10_000);
    expect(json.body.events[0].eventText).toBe(`bulk event ${BIG - 1}, with a comma`);
  });

  it('reads the cursor a batch at a time, only as the reader takes rows; the database serves others meanwhile', async () => {
    const out = await t.deps.services.observer.export(
      principal(),
      big.id,
      timelineQuery.parse({ order: 'asc' }),
    );
    let fetched = 0;
    let batches = 0;
    let largest = 0;
    const counted = {
      next: async () => {
        const rows = await out.events.next();
        fetched += rows.length;
        if (rows.length > 0) batches++;
        largest = Math.max(largest, rows.length);
        return rows;
      },
      close: () => out.events.close(),
    };
    let taken = -1; // the header is a CRLF too
    let aheadAtMost = 0;
    let wroteMeanwhile = false;
    for await (const chunk of exportStream('csv', out, counted)) {
      taken += (String(chunk).match(/\r\n/g) ?? []).length;
      aheadAtMost = Math.max(aheadAtMost, fetched - taken);
      if (!wroteMeanwhile && taken > 1000) {
        // Mid-export (on PGlite too) the database takes another statement.
        await f.record({ eventType: 'meanwhile', instanceId: big.id });
        wroteMeanwhile = true;
      }
    }
    expect(taken).toBe(10_000);
    expect(fetched).toBe(10_000);
    expect(largest).toBe(500);
    expect(batches).toBe(20);
    // Never more rows read from the database than the reader has taken, but the batch being
    // read and at most the next one.
    expect(aheadAtMost).toBeLessThanOrEqual(1000);
    expect(wroteMeanwhile).toBe(true);
  });

  it('a reader that stops closes the cursor; the database is not held by abandoned exports', async () => {
    const openCursors = async () =>
      Number(
        (await sql<{ n: number }>`select count(*)::int as n from pg_cursors`.execute(t.deps.db)).rows[0]!.n,
      );
    const out = await t.deps.services.observer.export(principal(), big.id, timelineQuery.parse({}));
    const stream = exportStream('json', out, out.events);
    for await (const chunk of stream) {
      expect(String(chunk)).toContain('"events":[');
      break; // destroys the stream
    }
    expect(await out.events.next()).toEqual([]);
    if (!isPostgres()) await eventually(async () => expect(await openCursors()).toBe(0));
    else
      await eventually(() =>
        expect(t.deps.database.pool.totalCount - t.deps.database.pool.idleCount).toBeLessThanOrEqual(1),
      );

    // Over HTTP: more abandoned downloads than the pool has connections (5 in tests), each
    // connection closed by its client after the first bytes.
    for (let i = 0; i < 6; i++) {
      await new Promise<void>((resolve, reject) => {
        const req = http.get(
          t.url + exportPath(big.id, 'export=csv'),
          { headers: { authorization: `Bearer ${cso.accessToken}` } },
          (res) => {
            res.once('data', () => {
              req.destroy();
              resolve();
            });
          },
        );
        req.on('error', (err) => (req.destroyed ? resolve() : reject(err)));
      });
    }
    const r = await t.api('GET', `/api/observer/observer/${big.id}/timeline?limit=1`, {
      token: cso.accessToken,
    });
    expect(r.status).toBe(200);
    if (!isPostgres()) await eventually(async () => expect(await openCursors()).toBe(0));
  });
});
