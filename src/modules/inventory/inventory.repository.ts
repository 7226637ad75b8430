// SQL only: items, user inventory, balances and the ledger.
import { sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import { dbNow, type Db, type Executor } from '../../platform/db/database.js';
import { readTogether } from '../../platform/db/read-together.js';
import type { LedgerKind } from './inventory.tables.js';

const now = () => dbNow();
const itemColumns = ['id', 'name', 'description', 'type', 'metadata'] as const;

export function insertItem(
  db: Executor,
  v: { name: string; description: string; type: string; metadata: Record<string, unknown> },
) {
  return db.insertInto('items').values(v).returning(itemColumns).executeTakeFirstOrThrow();
}
export function findItem(db: Executor, id: number) {
  return db.selectFrom('items').select(itemColumns).where('id', '=', id).executeTakeFirst();
}
export type ItemRow = NonNullable<Awaited<ReturnType<typeof findItem>>>;
export function updateItem(
  db: Executor,
  id: number,
  v: { name: string; description: string; type: string; metadata: Record<string, unknown> },
) {
  return db
    .updateTable('items')
    .set({ ...v, updated_at: now() })
    .where('id', '=', id)
    .returning(itemColumns)
    .executeTakeFirst();
}
export function deleteItem(db: Executor, id: number) {
  return db.deleteFrom('items').where('id', '=', id).executeTakeFirst();
}
export function itemNames(db: Executor, ids: readonly number[]) {
  return db
    .selectFrom('items')
    .select(['id', 'name'])
    .where('id', '=', sql<number>`any(${[...ids]}::int8[])`)
    .orderBy('id')
    .execute();
}
export async function listItems(
  db: Executor,
  p: { limit: number; offset: number; type?: string | undefined },
) {
  let q = db.selectFrom('items');
  if (p.type !== undefined) q = q.where('type', '=', p.type);
  const [rows, total] = await Promise.all([
    q.select(itemColumns).orderBy('id').limit(p.limit).offset(p.offset).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

/** Held items with their details, in item order; each row names its holder. */
function held(db: Executor) {
  return db
    .selectFrom('user_inventory as ui')
    .innerJoin('items', 'items.id', 'ui.item_id')
    .select([
      'ui.user_id',
      'items.id as item_id',
      'items.name',
      'items.description',
      'items.type',
      'items.metadata',
      'ui.quantity',
    ])
    .orderBy('items.id');
}

/** The user's held items (none: an empty list). */
export function heldItems(db: Executor, userId: number) {
  return held(db).where('ui.user_id', '=', userId).execute();
}

/** The user's held items read together with a caller's other reads (outside a transaction:
 * a chat turn's context). JSON carries the quantity as a number. */
export function heldItemsTogether(db: Db, userId: number) {
  return readTogether(db, jsonArrayFrom(held(db).where('ui.user_id', '=', userId)));
}

export function heldForUpdate(db: Executor, userId: number, itemId: number) {
  return db
    .selectFrom('user_inventory')
    .select('quantity')
    .where('user_id', '=', userId)
    .where('item_id', '=', itemId)
    .forUpdate()
    .executeTakeFirst();
}

/** Adds to a record, creating it when missing (one atomic statement), unless the sum would pass
 * `max`: then nothing changes and there is no row. */
export function addHeld(db: Executor, userId: number, itemId: number, quantity: number, max: number) {
  return db
    .insertInto('user_inventory')
    .values({ user_id: userId, item_id: itemId, quantity })
    .onConflict((oc) =>
      oc
        .columns(['user_id', 'item_id'])
        .doUpdateSet({
          quantity: sql<number>`user_inventory.quantity + excluded.quantity`,
          updated_at: now(),
        })
        .where(sql<boolean>`user_inventory.quantity + excluded.quantity <= ${max}`),
    )
    .returning('quantity')
    .executeTakeFirst();
}

export function setHeld(db: Executor, userId: number, itemId: number, quantity: number) {
  return db
    .updateTable('user_inventory')
    .set({ quantity, updated_at: now() })
    .where('user_id', '=', userId)
    .where('item_id', '=', itemId)
    .execute();
}

export function deleteHeld(db: Executor, userId: number, itemId: number) {
  return db
    .deleteFrom('user_inventory')
    .where('user_id', '=', userId)
    .where('item_id', '=', itemId)
    .execute();
}

export function appendLedger(
  db: Executor,
  v: {
    userId: number;
    kind: LedgerKind;
    itemId: number | null;
    delta: number;
    before: number;
    after: number;
    actorUserId: number | null;
    actorKind: string;
    reason: string;
    idempotencyKey: string | null;
    timelineEventId: number | null;
  },
) {
  return db
    .insertInto('economy_ledger')
    .values({
      user_id: v.userId,
      kind: v.kind,
      item_id: v.itemId,
      delta: v.delta,
      balance_before: v.before,
      balance_after: v.after,
      actor_user_id: v.actorUserId,
      actor_kind: v.actorKind,
      reason: v.reason,
      idempotency_key: v.idempotencyKey,
      timeline_event_id: v.timelineEventId,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
}

/** How much `actorUserId` changed for the user since the UTC day began (the absolute sum of its
 * director changes) of the currency, or of every item together. */
export async function directorUsedToday(
  db: Executor,
  userId: number,
  actorUserId: number,
  kind: LedgerKind,
): Promise<number> {
  const r = await db
    .selectFrom('economy_ledger')
    .select(sql<string>`coalesce(sum(abs(delta)), 0)`.as('used'))
    .where('user_id', '=', userId)
    .where('kind', '=', kind)
    .where('actor_user_id', '=', actorUserId)
    .where('actor_kind', '=', 'director')
    .where('created_at', '>=', sql<Date>`date_trunc('day', now(), 'UTC')`)
    .executeTakeFirstOrThrow();
  return Number(r.used);
}

export function ledger(db: Executor, userId: number, f: { kind?: LedgerKind; itemId?: number } = {}) {
  let q = db.selectFrom('economy_ledger').selectAll().where('user_id', '=', userId);
  if (f.kind !== undefined) q = q.where('kind', '=', f.kind);
  if (f.itemId !== undefined) q = q.where('item_id', '=', f.itemId);
  return q.orderBy('id').execute();
}

/** Each user's balance after their last currency change up to `at` (users with none are left
 * out). */
export function balancesAt(db: Executor, userIds: number[], at: string) {
  return sql<{ user_id: number; balance: number }>`
    select u.id as user_id, last.balance_after as balance
    from unnest(${userIds}::int8[]) as u(id)
    cross join lateral (
      select l.balance_after from economy_ledger l
      where l.user_id = u.id and l.kind = 'currency' and l.item_id is null
        and l.created_at <= ${at}::timestamptz
      order by l.id desc
      limit 1
    ) last`
    .execute(db)
    .then((r) => r.rows);
}

/** Each user's items held at `at`: the quantity after the last change of each item up to then,
 * when above 0, of items that still exist. */
export function itemsAt(db: Executor, userIds: number[], at: string) {
  return sql<{ user_id: number; item_id: number; name: string; quantity: number }>`
    select held.user_id, held.item_id, items.name, held.quantity
    from (
      select distinct on (l.user_id, l.item_id) l.user_id, l.item_id, l.balance_after as quantity
      from economy_ledger l
      where l.user_id = any(${userIds}::int8[]) and l.kind = 'item' and l.created_at <= ${at}::timestamptz
      order by l.user_id, l.item_id, l.id desc
    ) held
    join items on items.id = held.item_id
    where held.quantity > 0
    order by held.user_id, held.item_id`
    .execute(db)
    .then((r) => r.rows);
}
