// PostgreSQL parses and plans an unnamed statement each time it runs, a named (prepared) one once
// per connection. Kysely hands node-postgres its SQL as text and values; the pool Kysely is given
// here passes each statement that takes parameters in node-postgres's public query form
// `{ name, text, values }` instead, so every connection prepares a hot statement once and then only
// binds and executes it. Statements without parameters stay plain text: they may hold several
// commands (migrations), which a prepared statement cannot.
//
// Names are per text, for the life of the pool, given on a text's second run: the first `limit`
// texts that repeat get one (far more than the service's own statements), the rest run unnamed,
// so a stream of one-off texts (bulk inserts of any width, reads combined by read-together.ts in a
// shape that does not come again) neither takes a name nor grows each connection's set of
// prepared statements without bound. A connection's prepared statements end with it (PostgreSQL's
// session; PGlite's server discards them for each new client).
import type pg from 'pg';

/** The part of a pool client Kysely's PostgresDialect uses: queries and release. */
export interface KyselyPoolClient {
  query: pg.PoolClient['query'];
  release(destroy?: boolean | Error): void;
}

/** The name a statement text runs under, or undefined to send it unnamed. */
export type StatementNamer = (text: string, parameterCount: number) => string | undefined;

/** Longer texts are rarely repeated (wide multi-row inserts) and are not worth a slot. */
const MAX_NAMED_TEXT = 8_000;

export function statementNamer(limit = 500): StatementNamer {
  const names = new Map<string, string>();
  // Texts run once so far (forgotten all at once when as many as this: a text that repeats comes
  // back soon).
  let seen = new Set<string>();
  return (text, parameterCount) => {
    if (parameterCount === 0 || text.length > MAX_NAMED_TEXT) return undefined;
    let name = names.get(text);
    if (name !== undefined || names.size >= limit) return name;
    if (!seen.has(text)) {
      if (seen.size >= limit) seen = new Set();
      seen.add(text);
      return undefined;
    }
    seen.delete(text);
    name = `kysely_${names.size}`;
    names.set(text, name);
    return name;
  };
}

/** PostgreSQL re-plans a prepared statement after DDL, but refuses one whose result columns
 * changed (`select *` on a table that gained a column: a migration by another node). */
const isStalePlan = (err: unknown) => (err as { code?: string } | null)?.code === '0A000';

/** Wraps each pool client once (Kysely keeps one connection object per client it is given, so
 * the same client must always come back as the same wrapper). A client whose prepared statement
 * went stale is dropped when released: that statement fails once, the pool's next connection
 * prepares it again. */
export function namingClients(nameOf: StatementNamer): (client: pg.PoolClient) => KyselyPoolClient {
  const wrappers = new WeakMap<pg.PoolClient, KyselyPoolClient>();
  return (client) => {
    let wrapper = wrappers.get(client);
    if (!wrapper) {
      let stale = false;
      const query = ((text: unknown, values?: unknown) => {
        if (typeof text !== 'string' || !Array.isArray(values))
          return client.query(text as string, values as []);
        const name = nameOf(text, values.length);
        if (!name) return client.query(text, values);
        return client.query({ name, text, values }).catch((err: unknown) => {
          if (isStalePlan(err)) stale = true;
          throw err;
        });
      }) as pg.PoolClient['query'];
      wrapper = { query, release: (destroy) => client.release(stale || destroy) };
      wrappers.set(client, wrapper);
    }
    return wrapper;
  };
}
