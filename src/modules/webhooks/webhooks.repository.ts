// SQL only: webhooks, their deliveries and the deliveries' attempts.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { DeliveryStatus } from './webhooks.tables.js';

const webhookColumns = [
  'id',
  'url',
  'event_types',
  'observer_id',
  'description',
  'enabled',
  'created_by_user_id',
  'created_at',
  'updated_at',
] as const;
const deliveryColumns = [
  'id',
  'webhook_id',
  'event_id',
  'event_type',
  'status',
  'attempts',
  'last_status_code',
  'last_error',
  'created_at',
  'updated_at',
  'delivered_at',
] as const;

export type WebhookRow = Awaited<ReturnType<typeof findWebhook>> & {};
export type DeliveryRow = Awaited<ReturnType<typeof findDelivery>> & {};

export function insertWebhook(
  db: Executor,
  v: {
    id: string;
    url: string;
    eventTypes: string[];
    observerId: number | null;
    description: string;
    enabled: boolean;
    secretCiphertext: string;
    createdByUserId: number;
  },
) {
  return db
    .insertInto('webhooks')
    .values({
      id: v.id,
      url: v.url,
      event_types: v.eventTypes,
      observer_id: v.observerId,
      description: v.description,
      enabled: v.enabled,
      secret_ciphertext: v.secretCiphertext,
      created_by_user_id: v.createdByUserId,
    })
    .returning(webhookColumns)
    .executeTakeFirstOrThrow();
}

export function findWebhook(db: Executor, id: string) {
  return db.selectFrom('webhooks').select(webhookColumns).where('id', '=', id).executeTakeFirst();
}

export async function listWebhooks(db: Executor, limit: number, offset: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('webhooks')
      .select(webhookColumns)
      .orderBy('created_at', 'desc')
      .orderBy('id')
      .limit(limit)
      .offset(offset)
      .execute(),
    db
      .selectFrom('webhooks')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.n) };
}

export function updateWebhook(
  db: Executor,
  id: string,
  changes: Partial<{
    url: string;
    event_types: string[];
    observer_id: number | null;
    description: string;
    enabled: boolean;
    secret_ciphertext: string;
  }>,
) {
  return db
    .updateTable('webhooks')
    .set({ ...changes, updated_at: dbNow() })
    .where('id', '=', id)
    .returning(webhookColumns)
    .executeTakeFirst();
}

export function deleteWebhook(db: Executor, id: string) {
  return db.deleteFrom('webhooks').where('id', '=', id).executeTakeFirst();
}

/** What the timeline hook matches events against. */
export function enabledEndpoints(db: Executor) {
  return db
    .selectFrom('webhooks')
    .select(['id', 'event_types', 'observer_id'])
    .where('enabled', '=', true)
    .execute();
}

export function insertDeliveries(
  db: Executor,
  rows: { id: string; webhookId: string; eventId: number | null; eventType: string; body: string }[],
) {
  return db
    .insertInto('webhook_deliveries')
    .values(
      rows.map((r) => ({
        id: r.id,
        webhook_id: r.webhookId,
        event_id: r.eventId,
        event_type: r.eventType,
        body: r.body,
      })),
    )
    .returning(deliveryColumns)
    .execute();
}

export function findDelivery(db: Executor, id: string) {
  return db.selectFrom('webhook_deliveries').select(deliveryColumns).where('id', '=', id).executeTakeFirst();
}

/** A delivery with what sending it needs: its body and its endpoint's URL, state and secret. */
export function deliveryToSend(db: Executor, id: string) {
  return db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .select(['d.id', 'd.webhook_id', 'd.body', 'd.status', 'w.url', 'w.enabled', 'w.secret_ciphertext'])
    .where('d.id', '=', id)
    .executeTakeFirst();
}

/** One attempt: logged, and the delivery's state after it (its count taken from the row, so a
 * delivery's attempts are numbered in order whoever made them). */
export async function recordAttempt(
  db: Executor,
  id: string,
  a: { status: DeliveryStatus; statusCode: number | null; error: string | null; durationMs: number },
) {
  const row = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      status: a.status,
      last_status_code: a.statusCode,
      last_error: a.error,
      updated_at: dbNow(),
      ...(a.status === 'succeeded' ? { delivered_at: dbNow() } : {}),
    }))
    .where('id', '=', id)
    .returning(['attempts'])
    .executeTakeFirst();
  if (!row) return;
  await db
    .insertInto('webhook_delivery_attempts')
    .values({
      delivery_id: id,
      attempt: row.attempts,
      status_code: a.statusCode,
      error: a.error,
      duration_ms: a.durationMs,
    })
    .execute();
}

/** A delivery that ends without an attempt (its endpoint was disabled meanwhile). */
export function failWithoutAttempt(db: Executor, id: string, error: string) {
  return db
    .updateTable('webhook_deliveries')
    .set({ status: 'failed', last_error: error, updated_at: dbNow() })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** An endpoint's deliveries, newest first, with their attempts in order. */
export async function listDeliveries(
  db: Executor,
  f: { webhookId: string; status?: DeliveryStatus | undefined; limit: number; offset: number },
) {
  let rows = db
    .selectFrom('webhook_deliveries')
    .select(deliveryColumns)
    .where('webhook_id', '=', f.webhookId);
  let count = db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('webhook_id', '=', f.webhookId);
  if (f.status) {
    rows = rows.where('status', '=', f.status);
    count = count.where('status', '=', f.status);
  }
  const [deliveries, total] = await Promise.all([
    rows.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).offset(f.offset).execute(),
    count.executeTakeFirstOrThrow(),
  ]);
  const attempts = deliveries.length
    ? await db
        .selectFrom('webhook_delivery_attempts')
        .select(['delivery_id', 'attempt', 'attempted_at', 'status_code', 'error', 'duration_ms'])
        .where(
          'delivery_id',
          'in',
          deliveries.map((d) => d.id),
        )
        .orderBy('delivery_id')
        .orderBy('attempt')
        .execute()
    : [];
  return { deliveries, attempts, total: Number(total.n) };
}

/** Finished deliveries (and their attempts) last changed more than `days` ago. */
export async function sweepDeliveries(db: Executor, days: number): Promise<number> {
  const r = await db
    .deleteFrom('webhook_deliveries')
    .where('status', '<>', 'pending')
    .where('updated_at', '<', sql<Date>`now() - make_interval(days => ${days})`)
    .executeTakeFirst();
  return Number(r.numDeletedRows);
}
