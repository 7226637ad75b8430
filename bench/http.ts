// HTTP throughput and latency of the foundation (issue 2): a hello-world route of our app (every
// hook: auth, metrics, problem handling), GET /api/health, and GET /api/user/profile with a valid
// JWT, each with autocannon (100 connections, 10 s) on the embedded database and, when
// DATABASE_URL is set, on PostgreSQL. Login is argon2-bound and measured separately. autocannon
// runs as a child process (its own process, as a client on another machine would be): the
// service's process, event loop and garbage collector are the service's alone.
// Run: npx tsx bench/http.ts [--duration 10] [--connections 100] [--users 1000]
// The profile is measured for one user and for `--users` users at once (a token each, in turn).
// `--audit`: only GET /api/user/profile, with the audit log off, writing every request
// (AUDIT_LOG=all: a read is not audited by default) and as by default (the hook runs, writes
// nothing), twice each back to back per database: the audit write's cost on the route.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { dropSchema } from '../test/schema.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { embeddedDataDir } from './embedded-dir.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '100' },
    audit: { type: 'boolean', default: false },
    users: { type: 'string', default: '1000' },
  },
});
const duration = Number(values.duration);
const run = promisify(execFile);
const autocannonChild = fileURLToPath(new URL('./autocannon-child.mjs', import.meta.url));
const connections = Number(values.connections);

interface Result {
  db: string;
  route: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
  loopP99ms: number;
}

async function measure(
  url: string,
  path: string,
  headers: Record<string, string> | Record<string, string>[],
  opts: { method?: string; body?: string; conns?: number } = {},
) {
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const job = {
    url: url + path,
    connections: opts.conns ?? connections,
    duration,
    method: opts.method ?? 'GET',
    body: opts.body,
    // One set of headers, or one per user: each request takes the next (autocannon-child.mjs).
    headerSets: Array.isArray(headers) ? headers : [headers],
  };
  // The job goes in a file: a thousand tokens are more than one argument may hold.
  const jobFile = join(tmpdir(), `autocannon-${randomBytes(6).toString('hex')}.json`);
  await writeFile(jobFile, JSON.stringify(job));
  const { stdout } = await run(process.execPath, [autocannonChild, jobFile], {
    maxBuffer: 16 * 1024 * 1024,
  }).finally(() => rm(jobFile, { force: true }));
  const r = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  };
  lag.disable();
  return {
    rps: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors,
    non2xx: r.non2xx,
    loopP99ms: lag.percentile(99) / 1e6,
  };
}

async function bench(
  dbName: string,
  env: Record<string, string | undefined>,
  only?: string,
): Promise<Result[]> {
  const config = loadConfig({
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
    AUTH_RATE_LIMIT: '100000000',
    ...env,
  });
  const deps = await createDeps(config);
  const { app } = await buildApp(deps, {
    extraRoutes: (a) => {
      a.get('/bench/hello', { config: { auth: 'public' } }, async () => ({ hello: 'world' }));
      // The same with the access-token check: separates the JWT's cost from the database's.
      a.get('/bench/hello-auth', async () => ({ hello: 'world' }));
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const user = await deps.services.users.create({
    email: `bench-${randomBytes(4).toString('hex')}@example.test`,
    password: 'bench password 123',
  });
  const { accessToken } = await deps.services.auth.issue(user, 'api');
  // Many users at once: each request the next user's token, so reads by id hit different rows.
  const manyUsers: Record<string, string>[] = [];
  for (let i = 0; i < (only ? 0 : Number(values.users)); i++) {
    const u = await deps.services.users.create({
      email: `bench-${i}-${randomBytes(4).toString('hex')}@example.test`,
      password: null,
    });
    manyUsers.push({ authorization: `Bearer ${(await deps.services.auth.issue(u, 'api')).accessToken}` });
  }
  const out: Result[] = [];
  try {
    for (const [route, path, headers] of [
      ['hello-world', '/bench/hello', {}],
      ['GET /api/health', '/api/health', {}],
      ['hello-world with JWT check', '/bench/hello-auth', { authorization: `Bearer ${accessToken}` }],
      ['GET /api/user/profile', '/api/user/profile', { authorization: `Bearer ${accessToken}` }],
      [`GET /api/user/profile, ${manyUsers.length} users`, '/api/user/profile', manyUsers],
    ] as const) {
      if (Array.isArray(headers) && headers.length === 0) continue;
      if (only && route !== only) continue;
      out.push({ db: dbName, route, ...(await measure(url, path, headers)) });
    }
    if (only) return out;
    // Login: argon2id (19 MiB, t=2) dominates; a few connections are enough to saturate 2 cores.
    out.push({
      db: dbName,
      route: 'POST /api/auth/login',
      ...(await measure(
        url,
        '/api/auth/login',
        { 'content-type': 'application/json' },
        {
          method: 'POST',
          conns: 8,
          body: JSON.stringify({ email: user.email, password: 'bench password 123' }),
        },
      )),
    });
  } finally {
    await app.close();
    await deps.close();
  }
  return out;
}

if (values.audit) {
  const profile = 'GET /api/user/profile';
  const dbs: [string, () => Record<string, string | undefined>][] = [['pglite', () => embeddedDataDir()]];
  if (process.env.DATABASE_URL)
    dbs.push([
      'postgres',
      () => ({
        DATABASE_URL: process.env.DATABASE_URL,
        DB_SCHEMA: `bench_${randomBytes(4).toString('hex')}`,
        DB_POOL_SIZE: '20',
      }),
    ]);
  console.log(
    `\nGET /api/user/profile, audit log off, writing every request (all) and by default (writes), ${connections} connections, ${duration} s each\n`,
  );
  console.log('| db | run | audit | req/s | p50 ms | p99 ms | non-2xx |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [db, env] of dbs) {
    const rps: Record<string, number[]> = { off: [], all: [], writes: [] };
    for (const [i, mode] of (['off', 'all', 'writes', 'off', 'all', 'writes'] as const).entries()) {
      const e = env();
      try {
        const [r] = await bench(db, { ...e, AUDIT_LOG: mode }, profile);
        rps[mode]!.push(r!.rps);
        console.log(
          `| ${db} | ${i + 1} | ${mode} | ${r!.rps.toFixed(0)} | ${r!.p50} | ${r!.p99} | ${r!.non2xx} |`,
        );
      } finally {
        if (e.DB_SCHEMA) await dropSchema(process.env.DATABASE_URL!, e.DB_SCHEMA);
      }
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const cost = (mode: string) => ((100 * (mean(rps.off!) - mean(rps[mode]!))) / mean(rps.off!)).toFixed(1);
    console.log(
      `${db}: writing every request costs ${cost('all')}% of the route's throughput; the default (writes only: the hook alone here) ${cost('writes')}%`,
    );
  }
  process.exit(0);
}

const results: Result[] = [];
results.push(...(await bench('pglite', embeddedDataDir())));
if (process.env.DATABASE_URL) {
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  try {
    results.push(
      ...(await bench('postgres', {
        DATABASE_URL: process.env.DATABASE_URL,
        DB_SCHEMA: schema,
        DB_POOL_SIZE: '20',
      })),
    );
  } finally {
    await dropSchema(process.env.DATABASE_URL, schema);
  }
}

console.log(`\nautocannon ${connections} connections, ${duration} s per route (login: 8 connections)\n`);
console.log('| db | route | req/s | p50 ms | p99 ms | errors | non-2xx | event-loop p99 ms |');
console.log('|---|---|---|---|---|---|---|---|');
for (const r of results)
  console.log(
    `| ${r.db} | ${r.route} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${r.loopP99ms.toFixed(1)} |`,
  );
for (const db of new Set(results.map((r) => r.db))) {
  const hello = results.find((r) => r.db === db && r.route === 'hello-world')!;
  const profile = results.find((r) => r.db === db && r.route === 'GET /api/user/profile')!;
  const health = results.find((r) => r.db === db && r.route === 'GET /api/health')!;
  const many = results.find((r) => r.db === db && r.route.startsWith('GET /api/user/profile, '))!;
  console.log(
    `${db}: profile reaches ${((100 * profile.rps) / hello.rps).toFixed(0)}% of hello-world, ` +
      `${(profile.rps / health.rps).toFixed(2)} of GET /api/health; ` +
      `with ${values.users} users ${(many.rps / health.rps).toFixed(2)}`,
  );
}
process.exit(0);
