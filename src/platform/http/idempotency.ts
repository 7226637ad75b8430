// Idempotency-Key support for money, inventory and ingest writes (ARCHITECTURE.md conventions 6
// and 10). The key is claimed inside the business transaction, so the claim, the change and the
// stored answer commit together or not at all: a failed request leaves no trace and may be
// retried. Keys live in the database (every node sees them), scoped per caller and route. A
// concurrent duplicate on Postgres waits on the unique index until the first commits, then
// replays its answer; on the embedded database transactions are serialised anyway.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { z } from 'zod';
import type { Executor } from '../db/database.js';
import { AppError } from './problem.js';
import './idempotency.tables.js';

export interface IdempotencyClaim {
  scope: string;
  key: string;
  fingerprint: string;
}

/** The optional `Idempotency-Key` request header, for route schemas. */
export const idempotencyHeaders = z.object({
  'idempotency-key': z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1 to 200 visible ASCII characters')
    .optional()
    .describe('replays the first answer of a request made with the same key by the same caller'),
});

/** Builds the claim of a request: who calls (`user:7`, `apiKey:3`), which route, the key, and a
 * fingerprint of the body (a key reused with another body is a conflict). */
export function idempotencyClaim(
  caller: string,
  route: string,
  key: string | undefined,
  body: unknown,
): IdempotencyClaim | undefined {
  if (key === undefined) return undefined;
  const fingerprint = createHash('sha256')
    .update(JSON.stringify(body ?? null))
    .digest('base64url');
  return { scope: `${caller} ${route}`, key, fingerprint };
}

/** Runs `run` once per claim. Returns the stored first answer on a replay. */
export async function once<T>(
  trx: Executor,
  claim: IdempotencyClaim | undefined,
  run: () => Promise<T>,
): Promise<{ value: T; replayed: boolean }> {
  if (!claim) return { value: await run(), replayed: false };
  const claimed = await trx
    .insertInto('idempotency_keys')
    .values({
      scope: claim.scope,
      key: claim.key,
      fingerprint: claim.fingerprint,
      status_code: null,
      response: null,
    })
    .onConflict((oc) => oc.columns(['scope', 'key']).doNothing())
    .returning('key')
    .executeTakeFirst();
  if (!claimed) {
    const row = await trx
      .selectFrom('idempotency_keys')
      .select(['fingerprint', 'response'])
      .where('scope', '=', claim.scope)
      .where('key', '=', claim.key)
      .executeTakeFirstOrThrow();
    if (row.fingerprint !== claim.fingerprint)
      throw new AppError('conflict', 'This Idempotency-Key was already used with a different request');
    return { value: row.response as T, replayed: true };
  }
  const value = await run();
  await trx
    .updateTable('idempotency_keys')
    .set({ status_code: 200, response: JSON.stringify(value) })
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .execute();
  return { value, replayed: false };
}

/** Forgets keys older than `hours` (a retry window, not an archive); for the maintenance sweep. */
export function deleteExpiredIdempotencyKeys(db: Executor, hours = 24) {
  return db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${hours})`)
    .executeTakeFirst();
}
