// Server-side cursors: a long result (an export) read in batches, so no process ever holds it
// whole. Each engine has its own way, since PGlite has one session:
//   - PostgreSQL: a connection of the pool, held for the read, runs a REPEATABLE READ, READ ONLY
//     transaction; the probe and the cursor share its snapshot, and each `FETCH` returns the next
//     batch as the reader asks for it.
//   - PGlite: holding the only connection while a slow client downloads would stop every other
//     statement, so the probe and a `WITH HOLD` cursor are made in one short transaction (the
//     database keeps the result in its own storage when it commits), and each `FETCH` takes the
//     connection only for itself, between other statements.
import { randomBytes } from 'node:crypto';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/** A result read in batches. */
export interface RowCursor<R> {
  /** The next batch, at most the cursor's batch size; empty once the result is exhausted (the
   * cursor is then closed). */
  next(): Promise<R[]>;
  /** Releases the cursor and what it holds; idempotent, and harmless once exhausted. */
  close(): Promise<void>;
}

export interface OpenCursorOptions {
  /** Rows per `FETCH`. */
  batch: number;
  /** A statement run in the cursor's snapshot before it opens (a count, a look past a limit). */
  probe?: CompiledQuery | undefined;
}

export type OpenCursor = <R>(
  query: CompiledQuery<R>,
  opts: OpenCursorOptions,
) => Promise<{ cursor: RowCursor<R>; probe: Record<string, unknown>[] }>;

/** What a cursor needs of the pool: a connection (the guarded one: a timeout is a busy error). */
export interface CursorPool {
  connect(): Promise<pg.PoolClient>;
}

const run = (client: pg.PoolClient, text: string, values: readonly unknown[] = []) =>
  client.query({ text, values: values as unknown[] });

/** PostgreSQL: a plain cursor in a read-only transaction on a connection held until closed. */
export function postgresCursor(pool: CursorPool): OpenCursor {
  return async <R>(query: CompiledQuery<R>, opts: OpenCursorOptions) => {
    const name = `cursor_${randomBytes(8).toString('hex')}`;
    const client = await pool.connect();
    let probe: Record<string, unknown>[] = [];
    try {
      await run(client, 'begin isolation level repeatable read read only');
      if (opts.probe) probe = (await run(client, opts.probe.sql, opts.probe.parameters)).rows;
      await run(client, `declare ${name} no scroll cursor for ${query.sql}`, query.parameters);
    } catch (err) {
      await run(client, 'rollback').catch(() => undefined);
      client.release();
      throw err;
    }
    let open = true;
    const close = async (broken?: unknown) => {
      if (!open) return;
      open = false;
      try {
        if (broken === undefined) await run(client, 'commit');
        else await run(client, 'rollback');
        client.release();
      } catch (err) {
        // The connection is in an unknown state: the pool must not hand it out again.
        client.release(err instanceof Error ? err : true);
      }
    };
    const cursor: RowCursor<R> = {
      async next() {
        if (!open) return [];
        let rows: R[];
        try {
          rows = (await run(client, `fetch ${opts.batch} from ${name}`)).rows as R[];
        } catch (err) {
          await close(err);
          throw err;
        }
        if (rows.length < opts.batch) await close();
        return rows;
      },
      close: () => close(),
    };
    return { cursor, probe };
  };
}

/** PGlite: a `WITH HOLD` cursor made in a short transaction; each batch takes the connection
 * only for its `FETCH`. */
export function heldCursor(pool: CursorPool): OpenCursor {
  /** Runs statements on the one connection, released in between. */
  const using = async <T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    try {
      return await fn(client);
    } finally {
      client.release();
    }
  };
  return async <R>(query: CompiledQuery<R>, opts: OpenCursorOptions) => {
    const name = `cursor_${randomBytes(8).toString('hex')}`;
    const probe = await using(async (client) => {
      await run(client, 'begin isolation level repeatable read');
      try {
        const rows = opts.probe ? (await run(client, opts.probe.sql, opts.probe.parameters)).rows : [];
        await run(client, `declare ${name} no scroll cursor with hold for ${query.sql}`, query.parameters);
        await run(client, 'commit');
        return rows;
      } catch (err) {
        await run(client, 'rollback').catch(() => undefined);
        throw err;
      }
    });
    let open = true;
    const close = async () => {
      if (!open) return;
      open = false;
      await using((client) => run(client, `close ${name}`)).catch(() => undefined);
    };
    const cursor: RowCursor<R> = {
      async next() {
        if (!open) return [];
        let rows: R[];
        try {
          rows = await using(
            async (client) => (await run(client, `fetch ${opts.batch} from ${name}`)).rows as R[],
          );
        } catch (err) {
          await close();
          throw err;
        }
        if (rows.length < opts.batch) await close();
        return rows;
      },
      close,
    };
    return { cursor, probe };
  };
}
