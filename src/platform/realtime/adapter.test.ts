// The realtime adapter's NOTIFYs, coalesced per turn of the event loop: against a recording pool,
// and (when DATABASE_URL names a PostgreSQL server) against the server, whose listener must hear
// every notification once, in order, duplicates included.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { coalescingNotifies } from './adapter.js';

const NOTIFY = 'SELECT pg_notify($1, $2)';

function recordingPool(fail = false) {
  const statements: { text: string; values: unknown[] }[] = [];
  const pool = {
    connect: () => Promise.resolve('client'),
    query: (text: string, values: unknown[]) => {
      statements.push({ text, values });
      return fail ? Promise.reject(new Error('down')) : Promise.resolve({ rows: [] });
    },
  };
  return { statements, pool: coalescingNotifies(pool as unknown as pg.Pool) };
}

describe('coalescingNotifies', () => {
  it('sends the NOTIFYs of one turn as one statement, in order, and resolves each after it', async () => {
    const { statements, pool } = recordingPool();
    const sent = [
      pool.query(NOTIFY, ['c', 'a']),
      pool.query(NOTIFY, ['c', 'b']),
      pool.query(NOTIFY, ['d', 'a']),
    ];
    expect(statements).toEqual([]);
    await Promise.all(sent);
    expect(statements).toEqual([
      {
        text: expect.stringContaining('unnest') as string,
        values: [
          ['c', 'c', 'd'],
          ['a', 'b', 'a'],
        ],
      },
    ]);
    // A lone one is the adapter's own statement.
    await pool.query(NOTIFY, ['c', 'z']);
    expect(statements[1]).toEqual({ text: NOTIFY, values: ['c', 'z'] });
  });

  it('starts another statement at a repeated channel and payload; passes other statements through', async () => {
    const { statements, pool } = recordingPool();
    await Promise.all([
      pool.query(NOTIFY, ['c', 'a']),
      pool.query(NOTIFY, ['c', 'b']),
      pool.query(NOTIFY, ['c', 'a']),
      pool.query('DELETE FROM x', []),
    ]);
    expect(statements.map((s) => s.values)).toEqual([
      [],
      [
        ['c', 'c'],
        ['a', 'b'],
      ],
      ['c', 'a'],
    ]);
    expect(await pool.connect()).toBe('client');
  });

  it('fails each publish of a failed statement', async () => {
    const { pool } = recordingPool(true);
    const results = await Promise.allSettled([
      pool.query(NOTIFY, ['c', 'a']),
      pool.query(NOTIFY, ['c', 'b']),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it.runIf(process.env.DATABASE_URL?.startsWith('postgres'))(
    'on PostgreSQL: the listener hears each notification once, in order',
    async () => {
      const url = process.env.DATABASE_URL!;
      const listener = new pg.Client({ connectionString: url });
      const raw = new pg.Pool({ connectionString: url, max: 2 });
      await listener.connect();
      try {
        const channel = `coalesce_test_${process.pid}`;
        const heard: string[] = [];
        listener.on('notification', (m) => heard.push(m.payload ?? ''));
        await listener.query(`LISTEN "${channel}"`);
        const pool = coalescingNotifies(raw);
        const payloads = ['1', '2', '1', '3', '3', '4'];
        await Promise.all(payloads.map((p) => pool.query(NOTIFY, [channel, p])));
        for (let i = 0; i < 100 && heard.length < payloads.length; i++)
          await new Promise((r) => setTimeout(r, 20));
        expect(heard).toEqual(payloads);
      } finally {
        await listener.end();
        await raw.end();
      }
    },
  );
});
