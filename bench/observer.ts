// The observer's unified timeline at scale (issue 22): 1,000,000 timeline events over 100
// observers (10 Level-5 instances each, 10,000 events per observer over 30 days), seeded by
// set-based SQL with the timeline's indexes built after the rows, then measured over HTTP, one
// request at a time, as a CSO:
//   - the first page of an observer's timeline (limit 50), p50 / p95;
//   - a filtered search page (an event type and a word, `q`), p50 / p95;
//   - the root observer's first page and search page (its timeline is every event), p50 / p95;
//   - a 10,000-event CSV export: the process's peak memory above its level before the export
//     (RSS, which holds PGlite's worker too, and the live JS heap), sampled every 20 ms;
//   - 5D state at a random time of the 30 days (instances and their activity, their owners'
//     balances and items rebuilt from 70,000 ledger rows, the newest 20 events), p50 / p95.
// Targets: pages p95 under 20 ms on PostgreSQL and 50 ms on PGlite; export peak under 50 MB; 5D
// state p95 under 50 ms.
// Run: npx tsx bench/observer.ts [--events 1000000] [--requests 300] [--only pglite|postgres]
// Runs on PGlite (a data directory), and on PostgreSQL too when DATABASE_URL is set (its own
// schema, dropped at the end). Talks only to 127.0.0.1.
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps, type Deps } from '../src/deps.js';
import { onEachDatabase } from './databases.js';
import { pct } from './percentile.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    requests: { type: 'string', default: '300' },
    only: { type: 'string' },
  },
});
const EVENTS = Number(values.events);
const REQUESTS = Number(values.requests);
const OBSERVERS = 100;
const PER_OBSERVER = 10;
const USERS = 1000;
const LEDGER_PER_USER = 70; // 50 currency changes, 20 item changes
const DAYS = 30;

// A seeded generator: both databases get the same requests.
let seed = 22;
const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
const pick = <T>(a: readonly T[]) => a[Math.floor(rnd() * a.length)]!;

const TYPES = [
  'quest_started',
  'quest_done',
  'trade',
  'note',
  'diary_entry',
  'chat',
  'login',
  'logout',
  'craft',
  'battle',
];
// Event texts: 6 words each from a vocabulary of 4,096 made-up words (three syllables), drawn with
// a Zipf-like law (a word's rank is log-uniform), as words are in real text.
// Searches use words of rank 30 to 300 (each in 2.4 % to 0.24 % of the events); the
// "frequent word" row, ranks 1 to 5 (each in 40 % to 13 %).
const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ren',
  'tu',
  'sha',
  'vel',
  'dor',
  'an',
  'is',
  'ur',
  'eth',
  'bo',
  'ny',
  'qu',
  'zel',
];
const VOCABULARY = 4096;
const word = (rank: number) =>
  SYLLABLES[rank % 16]! + SYLLABLES[(rank >> 4) % 16]! + SYLLABLES[(rank >> 8) % 16]!;
const searchWord = () => word(30 + Math.floor(rnd() * 270));
const frequentWord = () => word(1 + Math.floor(rnd() * 5));

async function timed(ms: number[], fn: () => Promise<unknown>) {
  const t0 = performance.now();
  await fn();
  ms.push(performance.now() - t0);
}

/** The seed: users, observers and instances, the events, activity changes, the ledger. */
async function seedData(deps: Deps) {
  const db = deps.db;
  const t0 = performance.now();
  const root = await deps.services.timeline.rootObserverId();
  const users = (
    await sql<{ id: number }>`
      insert into users (name) select 'bench user ' || g from generate_series(1, ${USERS}) g returning id`.execute(
      db,
    )
  ).rows.map((r) => Number(r.id));
  const observers = (
    await sql<{ id: number }>`
      insert into instances (name, level, source, parent_instance_id, user_id, metadata)
      select 'observer ' || g, 8, 'portal', ${root}::int8, (${users}::int8[])[g], '{}'
      from generate_series(1, ${OBSERVERS}) g order by g returning id`.execute(db)
  ).rows.map((r) => Number(r.id));
  const instances = (
    await sql<{ id: number }>`
      insert into instances (name, level, source, persona_id, parent_instance_id, user_id, metadata)
      select 'instance ' || o || '.' || k, 5, (array['portal','chat_platform','game_client'])[1 + k % 3], 1 + k % 4,
             (${observers}::int8[])[o], (${users}::int8[])[1 + ((o - 1) * ${PER_OBSERVER} + k) % ${USERS}], '{}'
      from generate_series(1, ${OBSERVERS}) o, generate_series(0, ${PER_OBSERVER - 1}) k
      order by o, k returning id`.execute(db)
  ).rows.map((r) => Number(r.id));
  await sql`update instances set created_at = now() - interval '31 days' where id = any(${[...observers, ...instances]}::int8[])`.execute(
    db,
  );

  // The timeline's indexes are built after the rows (their definitions as the migrations made them).
  const indexes = (
    await sql<{ indexname: string; indexdef: string }>`
      select indexname, indexdef from pg_indexes
      where tablename = 'timeline_events' and schemaname = current_schema() and indexname <> 'timeline_events_pkey'`.execute(
      db,
    )
  ).rows;
  for (const i of indexes) await sql.raw(`drop index ${i.indexname}`).execute(db);
  const step = (DAYS * 86_400_000) / EVENTS; // ms between two events
  for (let start = 1; start <= EVENTS; start += 100_000) {
    const end = Math.min(EVENTS, start + 99_999);
    await sql`
      insert into timeline_events (user_id, event_type, event_text, source, instance_id, observer_id, persona_id,
                                   metadata, occurred_at, timeline_at)
      select case when g % 3 = 0 then (${users}::int8[])[1 + g % ${USERS}] end,
             (${TYPES}::text[])[1 + (g / 7) % ${TYPES.length}],
             (select string_agg(s[1 + r % 16] || s[1 + (r >> 4) % 16] || s[1 + (r >> 8) % 16], ' ')
              from (select floor(exp(((g::int8 * 2654435761 + k * 2246822519 + 12345) % 4294967296) / 4294967296.0
                                      * ln(${VOCABULARY})))::int as r
                    from generate_series(1, 6) k) ranks),
             (array['portal','chat_platform','game_client'])[1 + ((g / ${OBSERVERS}) % ${PER_OBSERVER}) % 3],
             (${instances}::int8[])[1 + (g % ${OBSERVERS}) * ${PER_OBSERVER} + (g / ${OBSERVERS}) % ${PER_OBSERVER}],
             (${observers}::int8[])[1 + g % ${OBSERVERS}],
             1 + ((g / ${OBSERVERS}) % ${PER_OBSERVER}) % 4,
             jsonb_build_object('instance', jsonb_build_object('level', 5), 'n', g),
             ts, ts
      from generate_series(${start}::int, ${end}::int) g,
           lateral (select now() - (${EVENTS}::int - g) * ${step}::float8 * interval '1 millisecond' as ts) t,
           (select ${SYLLABLES}::text[] as s) syllables`.execute(db);
  }
  // Each instance switched off and on again twice over the month: its activity has a past.
  await sql`
    insert into timeline_events (event_type, event_text, source, instance_id, observer_id, metadata, occurred_at, timeline_at)
    select 'instance_activity_changed', 'activity', 'portal', i.id, i.parent_instance_id,
           jsonb_build_object('isActive', c % 2 = 0, 'instance', jsonb_build_object('level', 5)), ts, ts
    from instances i, generate_series(1, 4) c,
         lateral (select now() - (${DAYS} * c / 5.0) * interval '1 day' + i.id * interval '1 millisecond' as ts) t
    where i.id = any(${instances}::int8[])`.execute(db);
  await db.transaction().execute(async (trx) => {
    await sql`set local maintenance_work_mem = '128MB'`.execute(trx);
    for (const i of indexes) await sql.raw(i.indexdef).execute(trx);
  });

  // The ledger: each user's coins and items changing over the month (append-only: only inserts).
  const items = (
    await sql<{ id: number }>`
      insert into items (name, type) select 'item ' || g, 'tool' from generate_series(1, 5) g returning id`.execute(
      db,
    )
  ).rows.map((r) => Number(r.id));
  await sql`
    insert into economy_ledger (user_id, kind, item_id, delta, balance_before, balance_after, actor_kind, created_at)
    select u, 'currency', null, 10, (k - 1) * 10, k * 10, 'system',
           now() - interval '30 days' + k * interval '14 hours' + u * interval '1 second'
    from unnest(${users}::int8[]) u, generate_series(1, ${LEDGER_PER_USER - 20}) k`.execute(db);
  await sql`
    insert into economy_ledger (user_id, kind, item_id, delta, balance_before, balance_after, actor_kind, created_at)
    select u, 'item', (${items}::int8[])[1 + k % 5], 1, (k - 1) / 5, (k - 1) / 5 + 1, 'system',
           now() - interval '30 days' + k * interval '35 hours' + u * interval '1 second'
    from unnest(${users}::int8[]) u, generate_series(1, 20) k`.execute(db);
  await sql`vacuum analyze timeline_events, instances, economy_ledger, users, items`.execute(db);
  await sql`checkpoint`.execute(db);
  return { observers, root, seedSec: (performance.now() - t0) / 1000 };
}

async function run(dbName: string, env: Record<string, string | undefined>) {
  const deps = await createDeps(
    loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      SERVICES: 'api',
      ...env,
    }),
  );
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const { observers, root, seedSec } = await seedData(deps);
    const admin = await deps.services.users.create({
      email: null,
      password: null,
      name: 'bench cso',
      role: 'cso',
      accountType: 'public',
    });
    const { accessToken } = await deps.services.auth.issue(admin, 'api');
    const headers = { authorization: `Bearer ${accessToken}` };
    const get = async (path: string) => {
      const res = await fetch(url + path, { headers });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${body.slice(0, 300)}`);
      return body;
    };
    const base = (id: number) => `/api/observer/observer/${id}`;
    const searchPath = (id: number, w = searchWord()) =>
      `${base(id)}/timeline?limit=50&eventType=${pick(TYPES)}&q=${w}`;
    const now = Date.now();
    const someTime = () => new Date(now - rnd() * DAYS * 86_400_000).toISOString();
    const statePath = (id: number) => `${base(id)}/5d-navigation/state?at=${encodeURIComponent(someTime())}`;

    // Warm-up: each route a few times.
    for (let i = 0; i < 30; i++) {
      await get(`${base(pick(observers))}/timeline?limit=50`);
      await get(searchPath(pick(observers)));
      await get(statePath(pick(observers)));
    }
    const first: number[] = [];
    const search: number[] = [];
    const searchOnly: number[] = [];
    const frequent: number[] = [];
    const rootFirst: number[] = [];
    const rootSearch: number[] = [];
    const state: number[] = [];
    const rows = { search: 0, searchOnly: 0, frequent: 0 };
    const count = async (path: string) =>
      (JSON.parse(await get(path)) as { events: unknown[] }).events.length;
    for (let i = 0; i < REQUESTS; i++) {
      await timed(first, () => get(`${base(pick(observers))}/timeline?limit=50`));
      await timed(search, async () => (rows.search += await count(searchPath(pick(observers)))));
      await timed(state, () => get(statePath(pick(observers))));
      if (i % 3 === 0) {
        await timed(searchOnly, async () => {
          rows.searchOnly += await count(`${base(pick(observers))}/timeline?limit=50&q=${searchWord()}`);
        });
        await timed(
          frequent,
          async () => (rows.frequent += await count(searchPath(pick(observers), frequentWord()))),
        );
        await timed(rootFirst, () => get(`${base(root)}/timeline?limit=50`));
        await timed(rootSearch, () => get(searchPath(root)));
      }
    }

    // A 10,000-event CSV export: the process's peak memory above its level before it. The live
    // JS heap is sampled after a forced collection (what the export holds, not its garbage).
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const exportOne = async () => {
      gc();
      const before = process.memoryUsage();
      let peakRss = before.rss;
      let peakLive = before.heapUsed + before.external;
      const sample = setInterval(() => {
        peakRss = Math.max(peakRss, process.memoryUsage.rss());
        gc();
        const m = process.memoryUsage();
        peakLive = Math.max(peakLive, m.heapUsed + m.external);
      }, 20);
      const t0 = performance.now();
      const res = await fetch(`${url}${base(pick(observers))}/timeline?export=csv&order=asc`, { headers });
      let bytes = 0;
      let lines = 0;
      for await (const chunk of res.body!) {
        bytes += chunk.byteLength;
        for (const b of chunk) if (b === 10) lines++;
      }
      clearInterval(sample);
      return {
        ms: performance.now() - t0,
        rows: lines - 1,
        mb: bytes / 1e6,
        truncated: res.headers.get('x-export-truncated'),
        rssMb: (peakRss - before.rss) / 1e6,
        liveMb: (peakLive - before.heapUsed - before.external) / 1e6,
      };
    };
    const exports = [];
    for (let i = 0; i < 3; i++) exports.push(await exportOne());
    const worst = exports.reduce((a, b) => (b.rssMb > a.rssMb ? b : a));

    const summary = (xs: number[]) => `${pct(xs, 50).toFixed(1)} / ${pct(xs, 95).toFixed(1)}`;
    return {
      db: dbName,
      seedSec,
      first: summary(first),
      search: `${summary(search)} (${(rows.search / search.length).toFixed(0)})`,
      searchOnly: `${summary(searchOnly)} (${(rows.searchOnly / searchOnly.length).toFixed(0)})`,
      frequent: `${summary(frequent)} (${(rows.frequent / frequent.length).toFixed(0)})`,
      rootFirst: summary(rootFirst),
      rootSearch: summary(rootSearch),
      state: summary(state),
      exportMs: worst.ms,
      exportRows: worst.rows,
      exportMb: worst.mb,
      exportTruncated: worst.truncated,
      exportRssMb: Math.max(...exports.map((e) => e.rssMb)),
      exportLiveMb: Math.max(...exports.map((e) => e.liveMb)),
    };
  } finally {
    await app.close();
    await deps.close();
  }
}

const results = await onEachDatabase('bench_obs', values.only, (db, env) =>
  run(db === 'pglite' ? 'PGlite (data directory)' : 'PostgreSQL', env),
);
console.log(
  `\n${EVENTS.toLocaleString('en')} events over ${OBSERVERS} observers, ${REQUESTS} requests of each observer kind ` +
    '(q only, frequent word and root: a third as many), one at a time; p50 / p95 ms (rows per page)\n',
);
console.log(
  '| db | seed s | first page | search page: type + word | search page: word | search: type + frequent word | root first page | root search page | 5D state |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.db} | ${r.seedSec.toFixed(0)} | ${r.first} | ${r.search} | ${r.searchOnly} | ${r.frequent} | ${r.rootFirst} | ${r.rootSearch} | ${r.state} |`,
  );
console.log('\n10,000-event CSV export (3 runs): peak above the level before it\n');
console.log('| db | rows | MB sent | truncated | ms | peak RSS MB | peak live heap + external MB |');
console.log('|---|---|---|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.db} | ${r.exportRows} | ${r.exportMb.toFixed(1)} | ${r.exportTruncated} | ${r.exportMs.toFixed(0)} | ${r.exportRssMb.toFixed(1)} | ${r.exportLiveMb.toFixed(1)} |`,
  );
process.exit(0);
