// Currency changes under concurrency (issue 4): modifyCurrency (rule 2: row lock, never below 0,
// a ledger row each) from N concurrent callers, on one hot user and spread over many users, on
// the embedded database and on PostgreSQL (DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
// when it answers). Also the same through HTTP (POST /api/inventory/modify) on the hot user.
// Run: npx tsx bench/currency.ts [--seconds 5] [--concurrency 32] [--users 1000]
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { dropSchema } from '../test/schema.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps, type Deps } from '../src/deps.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '32' },
    users: { type: 'string', default: '1000' },
  },
});
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const userCount = Number(values.users);

interface Row {
  db: string;
  scenario: string;
  concurrency: number;
  changesPerSec: number;
  p50ms: number;
  p99ms: number;
  refused: number;
  errors: number;
  ledgerMatches: boolean;
}

function pct(sorted: number[], p: number) {
  return sorted.length
    ? +sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(2)
    : NaN;
}

/** Runs `op` from `concurrency` loops for `seconds`; returns ops/s and latency percentiles. */
async function drive(op: (i: number) => Promise<unknown>) {
  const lat: number[] = [];
  let refused = 0;
  let errors = 0;
  let n = 0;
  const end = performance.now() + seconds * 1000;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const i = n++;
        const t0 = performance.now();
        try {
          await op(i);
        } catch (err) {
          if ((err as { code?: string }).code === 'insufficient_funds') refused++;
          else errors++;
        }
        lat.push(performance.now() - t0);
      }
    }),
  );
  const elapsed = (performance.now() - start) / 1000;
  lat.sort((a, b) => a - b);
  return {
    changesPerSec: Math.round(lat.length / elapsed),
    p50ms: pct(lat, 50),
    p99ms: pct(lat, 99),
    refused,
    errors,
  };
}

async function ledgerMatches(deps: Deps, userIds: number[]) {
  for (const id of userIds) {
    const ledger = await deps.services.inventory.ledger(id, { kind: 'currency' });
    const sum = ledger.reduce((s, l) => s + l.delta, 0);
    if (sum !== (await deps.services.inventory.inventory(id)).energy_coins) return false;
  }
  return true;
}

async function run(url: string): Promise<Row[]> {
  const schema = url.startsWith('postgres') ? `bench_${randomBytes(4).toString('hex')}` : undefined;
  const deps = await createDeps(
    loadConfig({
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
      DATABASE_URL: url,
      DB_SCHEMA: schema,
      SERVICES: 'api',
    }),
  );
  const { app } = await buildApp(deps);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const inv = deps.services.inventory;
  const rows: Row[] = [];
  try {
    const hot = await deps.services.users.create({ email: null, password: null, name: 'hot' });
    await inv.modifyCurrency(hot.id, 1000);
    // Alternate spends and awards so the balance hovers and both paths run.
    const hotRun = await drive((i) => inv.modifyCurrency(hot.id, i % 2 ? 7 : -7, { reason: 'bench' }));
    rows.push({
      db: deps.database.kind,
      scenario: 'service, one hot user',
      concurrency,
      ...hotRun,
      ledgerMatches: await ledgerMatches(deps, [hot.id]),
    });

    const many: number[] = [];
    for (let i = 0; i < userCount; i++)
      many.push((await deps.services.users.create({ email: null, password: null, name: `u${i}` })).id);
    const manyRun = await drive((i) =>
      inv.modifyCurrency(many[(i * 7919) % many.length]!, i % 3 ? 5 : -5, { reason: 'bench' }),
    );
    rows.push({
      db: deps.database.kind,
      scenario: `service, ${userCount} users`,
      concurrency,
      ...manyRun,
      ledgerMatches: await ledgerMatches(deps, many.slice(0, 50)),
    });

    const admin = await deps.services.users.create({
      email: null,
      password: null,
      name: 'admin',
      role: 'cso',
      accountType: 'public',
    });
    const { accessToken } = await deps.services.auth.issue(admin, 'api');
    const httpRun = await drive(async (i) => {
      const res = await fetch(`${base}/api/inventory/modify`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${accessToken}`,
          'idempotency-key': `k${i}`,
        },
        body: JSON.stringify({ userId: hot.id, amount: i % 2 ? 3 : -3 }),
      });
      const body = (await res.json()) as { code?: string };
      if (res.status !== 200) throw Object.assign(new Error(String(res.status)), { code: body.code });
    });
    rows.push({
      db: deps.database.kind,
      scenario: 'HTTP + Idempotency-Key, hot user',
      concurrency,
      ...httpRun,
      ledgerMatches: await ledgerMatches(deps, [hot.id]),
    });
  } finally {
    await app.close();
    await deps.close();
    if (schema) await dropSchema(url, schema);
  }
  return rows;
}

async function reachable(url: string) {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await c.connect();
    await c.end();
    return true;
  } catch {
    return false;
  }
}

const results: Row[] = [];
results.push(...(await run('memory://')));
const pgUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
if (await reachable(pgUrl)) results.push(...(await run(pgUrl)));
else console.error(`PostgreSQL at ${pgUrl} does not answer; embedded database only`);
console.table(results);
process.exit(0);
