// The statements and round trips of an ingest (POST /api/sync/ingest-event with an API key, each
// event on one of 10 observer instances, an enabled webhook for every event when `--webhook`),
// counted on the service's node-postgres clients: every statement sent, and every round trip (a
// statement sent while its connection had none in flight; the pool's connections are pipelined,
// so a statement sent behind another unanswered one shares its round trip). Two phases: one
// ingest at a time (each a group of one: its own transaction), then `--concurrency` in flight
// (the ingests that wait for a group meet in the next, one transaction for them all).
// `--root` runs another checkout's service (its src/ and its node_modules) under the same count,
// for an A/B. PostgreSQL only (DATABASE_URL): PGlite's statements do not go through node-postgres.
// Run: DATABASE_URL=… npx tsx bench/ingest-statements.ts [--root ../base] [--serial 200]
//      [--ingests 1000] [--concurrency 20] [--webhook]
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type pg from 'pg';
import { dropSchema } from '../test/schema.js';

const { values } = parseArgs({
  options: {
    root: { type: 'string', default: '.' },
    serial: { type: 'string', default: '200' },
    ingests: { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '20' },
    webhook: { type: 'boolean', default: false },
  },
});
const pgUrl = process.env.DATABASE_URL;
if (!pgUrl) throw new Error('DATABASE_URL is needed: the count is of node-postgres statements');
const root = resolve(values.root);
const from = (path: string) => import(pathToFileURL(resolve(root, path)).href);

// The checkout's own node-postgres (its src/ imports that one) is the one counted.
const { default: rootPg } = (await from('node_modules/pg/lib/index.js')) as { default: typeof pg };
const count = { statements: 0, rounds: 0 };
const inFlight = new WeakMap<object, number>();
const proto = rootPg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
const query = proto.query;
proto.query = function (this: object, ...args: unknown[]) {
  count.statements++;
  const n = inFlight.get(this) ?? 0;
  if (n === 0) count.rounds++;
  inFlight.set(this, n + 1);
  const done = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
  const last = args.at(-1);
  if (typeof last === 'function')
    args[args.length - 1] = (...cb: unknown[]) => {
      done();
      return (last as (...a: unknown[]) => unknown)(...cb);
    };
  const result = query.apply(this, args);
  if (typeof last !== 'function' && result && typeof (result as Promise<unknown>).then === 'function')
    (result as Promise<unknown>).then(done, done);
  else if (typeof last !== 'function') done();
  return result;
};

const { buildApp } = await from('src/app.ts');
const { loadConfig } = await from('src/config.ts');
const { createDeps } = await from('src/deps.ts');
const schema = `bench_${randomBytes(4).toString('hex')}`;
const config = loadConfig({
  NODE_ENV: 'test',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  DATABASE_URL: pgUrl,
  DB_SCHEMA: schema,
  SERVICES: 'api',
  ...(values.webhook ? { SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true' } : {}),
});
const deps = await createDeps(config);
const { app } = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;

const cso = await deps.services.users.create({
  email: `bench-${randomBytes(4).toString('hex')}@example.test`,
  password: null,
  role: 'cso',
  accountType: 'public',
});
const { key } = await deps.services.auth.createApiKey('bench', ['sync:write'], null);
const player = await deps.services.users.create({ email: null, password: null, name: 'player' });
const observerIds: number[] = [];
for (let i = 0; i < 10; i++)
  observerIds.push(
    (await deps.services.instances.create({ name: `bench-${i}`, level: 8, source: 'portal' }, cso.id)).id,
  );
if (values.webhook)
  await deps.services.webhooks.create({ url: 'http://127.0.0.1:9/bench', eventTypes: ['*'] }, cso.id);

let sent = 0;
async function ingest(): Promise<void> {
  const i = sent++;
  const res = await fetch(`${url}/api/sync/ingest-event`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({
      userId: player.id,
      eventType: 'bench',
      metadata: { instanceId: observerIds[i % observerIds.length] },
    }),
  });
  await res.arrayBuffer();
  if (res.status !== 201) throw new Error(`ingest answered ${res.status}`);
}

/** Statements and round trips per ingest over `n` ingests, `inFlight` at a time. */
async function phase(n: number, concurrency: number) {
  const before = { ...count };
  let left = n;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (left-- > 0) await ingest();
    }),
  );
  return {
    ingests: n,
    concurrency,
    statementsPerIngest: +((count.statements - before.statements) / n).toFixed(2),
    roundTripsPerIngest: +((count.rounds - before.rounds) / n).toFixed(2),
  };
}

await phase(50, 1); // warm-up: statement and queue caches
const idleBefore = count.statements;
await new Promise((r) => setTimeout(r, 2000));
const idle = count.statements - idleBefore;
const rows = [
  await phase(Number(values.serial), 1),
  await phase(Number(values.ingests), Number(values.concurrency)),
];
console.table(rows.map((r) => ({ root, webhook: values.webhook, ...r })));
console.error(`statements in 2 s idle: ${idle}`);

await app.close();
await deps.close();
await dropSchema(pgUrl, schema);
process.exit(0);
