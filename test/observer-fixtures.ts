// Fixtures of the observer's tests: instances and timeline events made through the real services
// (or, for bulk, one set-based INSERT), and the exact microsecond times the database recorded.
import { sql } from 'kysely';
import { expect } from 'vitest';
import { transaction } from '../src/platform/db/database.js';
import type { RecordInput, TimelineEvent } from '../src/modules/timeline/index.js';
import type { TestApp, TestUser } from './harness.js';

export interface Fixtures {
  /** Registers an instance as an admin (POST /api/admin/instances). */
  instance(body: Record<string, unknown>): Promise<{ id: number; name: string }>;
  /** Records one event in a transaction of its own, as a module does with its change. */
  record(input: RecordInput): Promise<TimelineEvent>;
  /** `n` events of one observer in one statement: `bulk-<i>` types cycle through `types`. */
  bulk(
    n: number,
    p: { observerId: number; instanceId?: number; text?: (i: number) => string; types?: string[] },
  ): Promise<void>;
  /** The exact (microsecond, UTC) time of an expression over one row, e.g. a ledger row's. */
  exact(query: string, params?: unknown[]): Promise<string>;
}

export function fixtures(t: TestApp, admin: () => TestUser): Fixtures {
  return {
    async instance(body) {
      const r = await t.api('POST', '/api/admin/instances', { token: admin().accessToken, body });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body as { id: number; name: string };
    },
    record: (input) => transaction(t.deps.db, (uow) => t.deps.services.timeline.record(uow, input)),
    async bulk(n, p) {
      const types = p.types ?? ['bulk'];
      const texts = Array.from({ length: n }, (_, i) => p.text?.(i) ?? `bulk event ${i}`);
      await sql`
        insert into timeline_events (event_type, event_text, source, instance_id, observer_id, metadata)
        select (${types}::text[])[1 + (g.i - 1) % ${types.length}], (${texts}::text[])[g.i], 'system',
               ${p.instanceId ?? null}::int8, ${p.observerId}, jsonb_build_object('i', g.i)
        from generate_series(1, ${n}) as g(i)`.execute(t.deps.db);
    },
    async exact(query, params = []) {
      const r = await t.deps.database.pool.query<{ at: string }>(
        `select to_char((${query}) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as at`,
        params,
      );
      return r.rows[0]!.at;
    },
  };
}

/** Parses RFC 4180 CSV (CRLF records, quoted fields with doubled quotes) into rows of fields. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  if (field !== '' || row.length > 0) throw new Error('the CSV does not end with CRLF');
  return rows;
}
