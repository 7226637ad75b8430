// Two nodes starting together on a database where the job queue was never installed: both start,
// whichever installs pg-boss's schema first (PostgreSQL only: an embedded database has one
// process). Several fresh schemas in a row, as the race is a matter of timing.
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isPostgres } from '../../../test/harness.js';
import { dropSchema } from '../../../test/schema.js';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { JobQueue } from './queue.js';

const ROUNDS = 4;

describe.skipIf(!isPostgres())('job queue install by two nodes at once', () => {
  const url = process.env.DATABASE_URL!;
  const schemas: string[] = [];
  const handles: DatabaseHandle[] = [];
  const queues: JobQueue[] = [];
  afterAll(async () => {
    await Promise.all(queues.map((q) => q.stop()));
    await Promise.all(handles.map((h) => h.close()));
    for (const schema of schemas) await dropSchema(url, schema);
  });

  const node = async (schema: string) => {
    const handle = await openDatabase({ url, dataDir: '.', poolSize: 3, poolTimeoutMs: 10_000, schema });
    handles.push(handle);
    const queue = new JobQueue(handle, pino({ level: 'silent' }));
    queue.define({ name: 'test.install', schema: z.object({}).strict(), handler: async () => undefined });
    queues.push(queue);
    return queue;
  };

  it('starts both nodes, every time, and each can enqueue', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const schema = `t_install_${randomBytes(4).toString('hex')}`;
      schemas.push(schema);
      const [a, b] = await Promise.all([node(schema), node(schema)]);
      const started = await Promise.allSettled([a.start({ work: false }), b.start({ work: false })]);
      expect(started.map((s) => (s.status === 'rejected' ? String(s.reason) : 'started'))).toEqual([
        'started',
        'started',
      ]);
      const handle = handles.at(-1)!;
      expect(await a.enqueue(handle.db, 'test.install', {})).toMatch(/^[0-9a-f-]{36}$/);
      expect(await b.enqueue(handle.db, 'test.install', {})).toMatch(/^[0-9a-f-]{36}$/);
    }
  });
});
