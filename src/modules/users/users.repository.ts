// SQL only: users.
import { sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { dbNow, type Db, type Executor } from '../../platform/db/database.js';
import { readTogether } from '../../platform/db/read-together.js';
import { precompiled } from '../../platform/db/precompiled.js';
import type { AccountType, Role } from '../../platform/security/identity.rules.js';

export const userColumns = [
  'id',
  'email',
  'name',
  'role',
  'account_type',
  'energy_coins',
  'email_verified',
  'created_at',
  'password_hash',
] as const;

// Precompiled: the profile route and the account check run these on every request or miss.
const byId = precompiled((db, id: number) => db.selectFrom('users').select(userColumns).where('id', '=', id));
const accessById = precompiled((db, id: number) =>
  db.selectFrom('users').select(['role', 'account_type', 'name']).where('id', '=', id),
);

export async function findById(db: Executor, id: number) {
  return (await byId(db, id))[0];
}

/** The same for several accounts at once (the account cache's batched misses), read together with
 * the sessions' read of the same misses (read-together.ts). */
export function accessOfMany(db: Db, ids: number[]) {
  return readTogether(
    db,
    jsonArrayFrom(
      db
        .selectFrom('users')
        .select(['id', 'role', 'account_type', 'name'])
        .where('id', '=', sql<number>`any(${ids}::int8[])`),
    ),
  );
}

/** The columns a signed-in client's rights come from. */
export async function access(db: Executor, id: number) {
  return (await accessById(db, id))[0];
}

export function findByEmail(db: Executor, email: string) {
  return db
    .selectFrom('users')
    .select(userColumns)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export function insert(
  db: Executor,
  values: {
    email: string | null;
    passwordHash: string | null;
    name: string;
    role: Role;
    accountType: AccountType;
    emailVerified?: boolean;
  },
) {
  return db
    .insertInto('users')
    .values({
      email: values.email,
      password_hash: values.passwordHash,
      name: values.name,
      role: values.role,
      account_type: values.accountType,
      email_verified: values.emailVerified ?? false,
    })
    .returning(userColumns)
    .executeTakeFirstOrThrow();
}

export function update(
  db: Executor,
  id: number,
  values: Partial<{
    role: Role;
    account_type: AccountType;
    name: string;
    password_hash: string;
    email_verified: boolean;
    email: string;
  }>,
) {
  return db
    .updateTable('users')
    .set({ ...values, updated_at: dbNow() })
    .where('id', '=', id)
    .returning(userColumns)
    .executeTakeFirst();
}

export async function list(
  db: Executor,
  opts: {
    limit: number;
    offset: number;
    q?: string | undefined;
    role?: Role | undefined;
    accountType?: AccountType | undefined;
  },
) {
  let query = db.selectFrom('users');
  if (opts.q) {
    const like = `%${opts.q.toLowerCase().replace(/[\\%_]/g, (c) => '\\' + c)}%`;
    query = query.where((eb) =>
      eb.or([eb(sql`lower(email)`, 'like', like), eb(sql`lower(name)`, 'like', like)]),
    );
  }
  if (opts.role) query = query.where('role', '=', opts.role);
  if (opts.accountType) query = query.where('account_type', '=', opts.accountType);
  const [rows, total] = await Promise.all([
    query.select(userColumns).orderBy('id').limit(opts.limit).offset(opts.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export function countByRoleAndType(db: Executor) {
  return db
    .selectFrom('users')
    .select(['role', 'account_type', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy(['role', 'account_type'])
    .execute();
}

export function exists(db: Executor, id: number) {
  return db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst();
}

export function remove(db: Executor, id: number) {
  return db.deleteFrom('users').where('id', '=', id).execute();
}

/** Marks the address verified only while the account still has the address the token went to. */
export function markEmailVerified(db: Executor, id: number, email: string) {
  return db
    .updateTable('users')
    .set({ email_verified: true, updated_at: dbNow() })
    .where('id', '=', id)
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

/** The verified owner of the address takes the account over: verified, and no password. */
export function claim(db: Executor, id: number) {
  return db
    .updateTable('users')
    .set({ email_verified: true, password_hash: null, updated_at: dbNow() })
    .where('id', '=', id)
    .execute();
}

export function firstCsoId(db: Executor) {
  return db
    .selectFrom('users')
    .select((eb) => eb.fn.min<number>('id').as('id'))
    .where('role', '=', 'cso')
    .executeTakeFirst();
}

export function balanceForUpdate(db: Executor, id: number) {
  return db.selectFrom('users').select('energy_coins').where('id', '=', id).forUpdate().executeTakeFirst();
}

/** One statement: the UPDATE takes the row lock, and the condition (with the CHECK constraint
 * behind it) keeps the balance at 0 or above. No row: refused, or no such user. */
export function addToBalance(db: Executor, id: number, amount: number, max: number) {
  return db
    .updateTable('users')
    .set({ energy_coins: sql<number>`energy_coins + ${amount}` })
    .where('id', '=', id)
    .where(sql<boolean>`energy_coins + ${amount} >= 0`)
    .where(sql<boolean>`energy_coins + ${amount} <= ${max}`)
    .returning('energy_coins')
    .executeTakeFirst();
}

export function balance(db: Executor, id: number) {
  return db.selectFrom('users').select('energy_coins').where('id', '=', id).executeTakeFirst();
}

/** The balance read together with a caller's other reads (outside a transaction). */
export async function balanceTogether(db: Db, id: number) {
  const row = await readTogether(
    db,
    jsonObjectFrom(db.selectFrom('users').select('energy_coins').where('id', '=', id)),
  );
  return row ?? undefined;
}

/** The NPC accounts (silicon + npc: the assistant and the characters) among `ids`. */
export function npcsAmong(db: Executor, ids: number[]) {
  return db
    .selectFrom('users')
    .select(['id', 'name'])
    .where('id', '=', sql<number>`any(${ids}::int8[])`)
    .where('role', '=', 'silicon')
    .where('account_type', '=', 'npc')
    .execute();
}

const byIds = precompiled((db, ids: number[]) =>
  db
    .selectFrom('users')
    .select(userColumns)
    .where('id', '=', sql<number>`any(${ids}::int8[])`),
);

export function findByIds(db: Executor, ids: number[]) {
  return byIds(db, ids);
}
