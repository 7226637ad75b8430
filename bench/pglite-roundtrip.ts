// One statement's round trip on the embedded database, as the service makes it: from the main
// thread's pg client over the Unix socket to PGlite's worker thread and back (database.ts,
// pglite-worker.mjs), one statement at a time, so each figure is the fixed cost a statement adds
// to PGlite's one connection. Kinds: `select 1` (no parameter: the simple protocol, one message),
// a by-id read unprepared (parse, bind, describe, execute, sync) and prepared (the service's way
// for a parameterised statement: bind, describe, execute, sync), and a one-row insert that commits.
// Run: npx tsx bench/pglite-roundtrip.ts [--statements 3000]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/platform/db/database.js';

const { values } = parseArgs({ options: { statements: { type: 'string', default: '3000' } } });
const N = Number(values.statements);

const dir = mkdtempSync(join(tmpdir(), 'ap-bench-'));
const h = await openDatabase({ url: undefined, dataDir: dir, poolSize: 1, poolTimeoutMs: 5000 });
const client = await h.pool.connect();
await client.query('create table t (id int primary key, coins bigint, name text)');
await client.query('insert into t select g, g * 10, md5(g::text) from generate_series(1, 10000) g');

async function measure(kind: string, run: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 300; i++) await run(i); // warm-up: plans cached, JIT warm
  const start = performance.now();
  for (let i = 0; i < N; i++) await run(i);
  const us = ((performance.now() - start) / N) * 1000;
  console.log(`| ${kind} | ${us.toFixed(0)} |`);
}

console.log(`\n${N} statements each, one at a time\n\n| statement | µs per round trip |\n|---|---|`);
await measure('select 1', () => client.query('select 1'));
await measure('by id, unprepared', (i) =>
  client.query('select coins from t where id = $1', [1 + (i % 10000)]),
);
await measure('by id, prepared', (i) =>
  client.query({ name: 'by-id', text: 'select coins from t where id = $1', values: [1 + (i % 10000)] }),
);
let next = 20_000;
await measure('insert, committed', () =>
  client.query('insert into t (id, coins, name) values ($1, 1, $2)', [next++, 'x']),
);
client.release();
await h.close();
rmSync(dir, { recursive: true, force: true });
