import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createDeps } from '../src/deps.js';
import { startFakeModelServer } from '../test/fake-model-server.js';

let log: string[] | null = null;
const proto = pg.Client.prototype as any;
const q = proto.query;
proto.query = function (...args: any[]) {
  const t = typeof args[0] === 'string' ? args[0] : args[0]?.text ?? args[0]?.name;
  if (log) log.push(String(t).replace(/\s+/g, ' ').slice(0, 160));
  return q.apply(this, args);
};
const fake = await startFakeModelServer();
const schema = 'prof_' + Date.now();
const config = loadConfig({
  NODE_ENV: 'test', LOG_LEVEL: 'silent', JWT_SECRET: 'bench-secret-bench-secret-bench-secret-0123',
  ...fake.env(), DATABASE_URL: process.env.DATABASE_URL ?? 'memory://', ...(process.env.DATABASE_URL ? { DB_SCHEMA: schema } : {}),
});
const deps = await createDeps(config);
const { app } = await buildApp(deps);
await app.listen({ port: 0, host: '127.0.0.1' });
const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
const s = deps.services;
for (const [name, sp] of [['Docs NPC', ['docs']], ['Code NPC', ['code']], ['Test NPC', ['tests']]] as const)
  await s.characters.createNpc({ name, description: 'x', metadata: { specialties: [...sp] } });
const admin = await s.users.create({ email: null, password: null, name: 'A', role: 'cso', accountType: 'public' });
const adminToken = (await s.auth.issue(admin, 'web_portal')).accessToken;
const u = await s.users.create({ email: null, password: null, name: 'U' });
const token = (await s.auth.issue(u, 'web_portal')).accessToken;
const call = async (kind: string, tok: string, method: string, path: string, body?: unknown) => {
  log = [];
  const t0 = performance.now();
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${tok}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json: any = await res.json();
  const ms = performance.now() - t0;
  await new Promise((r) => setTimeout(r, kind === "approve" ? 1500 : 50));
  console.log(`== ${kind} ${res.status} ${ms.toFixed(1)} ms, ${log.length} statements (incl. 50ms after)`);
  if (process.env.SQL) for (const l of log) console.log('   ' + l);
  log = null;
  return json;
};
for (let round = 0; round < 2; round++) {
const i = await call('create', token, 'POST', '/api/protocol/instances', { machineId: 'documentation_flow_v1', context: { title: 'T', tasks: [{ title: 'Docs', specialty: 'docs' }, { title: 'Code', specialty: 'code' }, { title: 'Tests', specialty: 'tests' }] } });
await call('transition', token, 'POST', `/api/protocol/instances/${i.id}/transition`, { targetState: 'triage' });
const exec = await call('approve', adminToken, 'POST', `/api/protocol/instances/${i.id}/approvals`, {});
const runId = exec.instance.activeRunId;
for (;;) { const r = await call('getRun', token, 'GET', `/api/protocol/runs/${runId}`); if (r.status === 'completed' || r.status === 'failed') break; await new Promise((r) => setTimeout(r, 300)); }
await call('evidence', token, 'POST', `/api/protocol/instances/${i.id}/evidence`, { description: 'demo', proofUrl: 'https://demo.invalid/' });
const { artifacts } = await call('list', token, 'GET', `/api/protocol/instances/${i.id}/artifacts`);
for (const a of artifacts) await call('review', token, 'POST', `/api/protocol/artifacts/${a.id}/review`, { approve: true });
await call('approve2', adminToken, 'POST', `/api/protocol/instances/${i.id}/approvals`, {});
}
const { sql } = await import('kysely');
console.log((await sql`select extract(epoch from started_at - created_at)*1000 as wait, extract(epoch from finished_at - started_at)*1000 as run from workflow_runs`.execute(deps.db)).rows);
await app.close(); await deps.close?.(); await fake.close();
if (process.env.DATABASE_URL) { const c = new pg.Client(process.env.DATABASE_URL); await c.connect(); await c.query(`drop schema ${schema} cascade; drop schema if exists ${schema}_boss cascade`); await c.end(); }
process.exit(0);
