// Which processes count as alive (the holders of the embedding queue's claims), on both databases:
// a started process is alive and a stopped one is not; on PostgreSQL a process that stops beating
// (killed) is dead once NODE_TIMEOUT_SECONDS pass and alive again with its next beat; on the
// embedded database a restarted process leaves every earlier one dead at once. Time is moved by
// setting the rows' beat back, never waited for.
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, isPostgres, type TestApp } from '../../../test/harness.js';
import { NODE_TIMEOUT_SECONDS, NodeLiveness, nodeAlive, nodeExpiry } from './liveness.js';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function alive(id: string): Promise<boolean> {
  const r = await sql<{ alive: boolean }>`select ${nodeAlive(sql`${id}::uuid`)} as alive`.execute(t.deps.db);
  return r.rows[0]!.alive;
}

/** Seconds until `id` counts as dead unless it beats again (PostgreSQL); null without a row. */
async function expiresIn(id: string): Promise<number | null> {
  const r = await sql<{ s: number | null }>`
    select extract(epoch from ${nodeExpiry(sql`${id}::uuid`)} - now())::float8 as s`.execute(t.deps.db);
  return r.rows[0]!.s;
}

/** As if `seconds` had passed since the process's last beat. */
async function silentFor(id: string, seconds: number) {
  await sql`update service_nodes set beat_at = now() - make_interval(secs => ${seconds})
    where id = ${id}::uuid`.execute(t.deps.db);
}

describe('process liveness', () => {
  it('this process is alive; an id without a row (a process gone) is not', async () => {
    expect(await alive(t.deps.liveness.id)).toBe(true);
    expect(await alive('00000000-0000-4000-8000-000000000001')).toBe(false);
  });

  it.runIf(isPostgres())(
    'PostgreSQL: a process that stops beating is dead after the timeout, alive again with its next beat',
    async () => {
      const other = new NodeLiveness(t.deps.database, t.deps.log);
      await other.start();
      expect(await alive(other.id)).toBe(true);
      // It beats every few seconds: within the timeout it is alive.
      expect(await expiresIn(other.id)).toBeLessThanOrEqual(NODE_TIMEOUT_SECONDS);
      await silentFor(other.id, NODE_TIMEOUT_SECONDS - 1);
      expect(await alive(other.id)).toBe(true);
      // Killed: no beat for the timeout.
      await silentFor(other.id, NODE_TIMEOUT_SECONDS + 1);
      expect(await alive(other.id)).toBe(false);
      // A slow but live process beats again and is alive again.
      await other.beat();
      expect(await alive(other.id)).toBe(true);
      // A clean stop leaves nothing behind.
      await other.stop();
      expect(await alive(other.id)).toBe(false);
      expect(await alive(t.deps.liveness.id)).toBe(true);
    },
  );

  it.runIf(!isPostgres())(
    'embedded database: a process started on it (a restart) leaves every earlier one dead',
    async () => {
      const before = t.deps.liveness.id;
      // Its own row never expires: nothing else can open this database while it runs.
      const own = await sql<{ finite: boolean }>`
        select isfinite(beat_at) as finite from service_nodes where id = ${before}::uuid`.execute(t.deps.db);
      expect(own.rows).toEqual([{ finite: false }]);
      expect(await alive(before)).toBe(true);
      const restarted = new NodeLiveness(t.deps.database, t.deps.log);
      await restarted.start();
      expect(await alive(before)).toBe(false);
      expect(await alive(restarted.id)).toBe(true);
      await restarted.stop();
      // The test app goes on as the live process.
      await sql`insert into service_nodes (id, beat_at) values (${before}::uuid, 'infinity')`.execute(
        t.deps.db,
      );
    },
  );
});
