// Idempotency-Key support for money, inventory and ingest writes (ARCHITECTURE.md conventions 6
// and 10). A key replays the first answer of its request: a success, or a refusal (a 4xx problem
// other than 401, 403 and 429, which say who or when may call, not what the request is). Keys live
// in the database (every node sees them), scoped per caller and route.
//
// The key is claimed inside the business transaction and its answer stored in the same
// transaction, so the claim and the answer commit together. The operation runs after a savepoint:
// a refusal (an AppError, thrown with the change half made) rolls back to it, undoing the change
// but keeping the claim, and the refusal is stored under the key before the commit. A repeat that
// arrives while the first is still running never runs the operation: on PostgreSQL it waits on the
// key's unique index until the first commits, then replays the stored answer; on the embedded
// database transactions are serialised anyway. Any other failure (a 500, a busy database, 401,
// 403, 429) rolls the whole transaction back with its claim: nothing is stored, the retry runs.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { z } from 'zod';
import { type Db, type Executor, type Trx, transaction } from '../db/database.js';
import type { UnitOfWork } from '../db/unit-of-work.js';
import { AppError, type Problem } from './problem.js';
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

/** Whether a failure is the request's answer, kept under its key and replayed: a 4xx problem
 * about the request itself. 401 and 403 (the caller's credentials or rights) and 429 (the
 * caller's rate) are not, and neither is anything unexpected (5xx): those store nothing. */
export function isReplayableRefusal(err: unknown): err is AppError {
  return (
    err instanceof AppError &&
    err.status >= 400 &&
    err.status < 500 &&
    err.status !== 401 &&
    err.status !== 403 &&
    err.status !== 429
  );
}

/** The header that marks a replayed answer (a success's route sets it; a refusal carries it). */
export const REPLAYED_HEADER = 'idempotent-replayed';

/** Runs `run` as a unit of work, once per claim: the first request's answer (its value, or its
 * refusal, thrown) is stored under the key, and a repeat gets it back (`replayed`, or the same
 * problem with the `idempotent-replayed` header) without running anything. Without a claim it
 * is a plain transaction. What a refused run collected (its items, its after-commit work) is
 * dropped with its change. */
export async function once<T>(
  db: Db,
  claim: IdempotencyClaim | undefined,
  run: (uow: UnitOfWork) => Promise<T>,
): Promise<{ value: T; replayed: boolean }> {
  if (!claim) return { value: await transaction(db, run), replayed: false };
  const outcome = await transaction(
    db,
    async (uow): Promise<{ value: T; replayed: boolean } | { refused: AppError }> => {
      const { trx } = uow;
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
          .select(['fingerprint', 'status_code', 'response'])
          .where('scope', '=', claim.scope)
          .where('key', '=', claim.key)
          .executeTakeFirstOrThrow();
        if (row.fingerprint !== claim.fingerprint)
          throw new AppError('conflict', 'This Idempotency-Key was already used with a different request');
        if (row.status_code !== null && row.status_code >= 400)
          throw replayedRefusal(row.response as Problem);
        return { value: row.response as T, replayed: true };
      }
      // The claim stays whatever the operation does; a refusal (raised by the run or by its
      // flush) rolls back to here.
      let value: T;
      try {
        value = await uow.savepoint(() => run(uow));
      } catch (err) {
        if (!isReplayableRefusal(err)) throw err;
        await storeAnswer(trx, claim, err.status, err.toProblem());
        return { refused: err };
      }
      await storeAnswer(trx, claim, 200, value);
      return { value, replayed: false };
    },
  );
  // The refusal is answered once its key committed.
  if ('refused' in outcome) throw outcome.refused;
  return outcome;
}

/** `status_code`: 200 for a success (its route picks the status it answers with), else the
 * refusal's status, whose problem object is the stored `response`. */
async function storeAnswer(trx: Trx, claim: IdempotencyClaim, status: number, response: unknown) {
  await trx
    .updateTable('idempotency_keys')
    .set({ status_code: status, response: JSON.stringify(response) })
    .where('scope', '=', claim.scope)
    .where('key', '=', claim.key)
    .execute();
}

/** The stored refusal, answered again: the same problem body, marked as a replay. */
function replayedRefusal(problem: Problem): AppError {
  const { type: _type, title: _title, status: _status, detail, code, ...extensions } = problem;
  return new AppError(code, detail, extensions, { [REPLAYED_HEADER]: 'true' });
}

/** Forgets keys older than `hours` (a retry window, not an archive); for the maintenance sweep. */
export function deleteExpiredIdempotencyKeys(db: Executor, hours = 24) {
  return db
    .deleteFrom('idempotency_keys')
    .where('created_at', '<', sql<Date>`now() - make_interval(hours => ${hours})`)
    .executeTakeFirst();
}
