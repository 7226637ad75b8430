// SQL only: protocol records.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { ProtocolDefinition } from './protocols.schemas.js';

const columns = [
  'id',
  'family',
  'version',
  'name',
  'definition',
  'builtin',
  'created_at',
  'updated_at',
] as const;

export function findById(db: Executor, id: string) {
  return db.selectFrom('protocols').select(columns).where('id', '=', id).executeTakeFirst();
}

export function findMany(db: Executor, ids: string[]) {
  return db.selectFrom('protocols').select(columns).where('id', 'in', ids).execute();
}

export function list(db: Executor) {
  return db.selectFrom('protocols').select(columns).orderBy('family').orderBy('version').execute();
}

/** Protocols with, for a reference protocol, the record its definition names as base. */
function withBase(db: Executor) {
  return db
    .selectFrom('protocols as p')
    .leftJoin('protocols as b', (join) => join.on(sql<boolean>`b.id = p.definition->>'base'`))
    .select(columns.map((c) => `p.${c}` as const))
    .select(['b.id as base_id', 'b.definition as base_definition']);
}

type WithBaseRow = Awaited<ReturnType<ReturnType<typeof withBase>['executeTakeFirstOrThrow']>>;

/** A protocol with its base protocol (null for a full template). */
export type FoundWithBase = ReturnType<typeof toFound>;

function toFound({ base_id, base_definition, ...protocol }: WithBaseRow) {
  return {
    row: protocol,
    base: base_id !== null && base_definition !== null ? { id: base_id, definition: base_definition } : null,
  };
}

/** A protocol by id with its base, in one read (a chat turn routed to a channel's pinned protocol). */
export async function findWithBase(db: Executor, id: string) {
  const row = await withBase(db).where('p.id', '=', id).executeTakeFirst();
  return row && toFound(row);
}

/** Each of these families' latest version with its base, in one read (the routing of concurrent
 * chat turns). */
export async function findLatestOfFamilies(db: Executor, families: string[]) {
  const rows = await withBase(db)
    .distinctOn('p.family')
    .where('p.family', '=', sql<string>`any(${families}::text[])`)
    .orderBy('p.family')
    .orderBy('p.version', 'desc')
    .execute();
  return rows.map(toFound);
}

/** Ids of the protocols whose definition names `id` as their base. */
export async function usedAsBaseBy(db: Executor, id: string): Promise<string[]> {
  const rows = await db
    .selectFrom('protocols')
    .select('id')
    .where(sql<string>`definition->>'base'`, '=', id)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

export interface ProtocolValues {
  id: string;
  family: string;
  version: number;
  definition: ProtocolDefinition;
  builtin: boolean;
  userId: number | null;
}

/** The row's own columns (its authors aside). */
function rowOf(v: ProtocolValues) {
  return {
    id: v.id,
    family: v.family,
    version: v.version,
    name: v.definition.name,
    definition: JSON.stringify(v.definition),
    builtin: v.builtin,
  };
}

export function insert(db: Executor, v: ProtocolValues) {
  return db
    .insertInto('protocols')
    .values({ ...rowOf(v), created_by_user_id: v.userId, updated_by_user_id: v.userId })
    .returning(columns)
    .executeTakeFirstOrThrow();
}

/** Seeding: inserts each one whose id does not exist (several nodes may start at once), in one
 * statement. The ids inserted. */
export async function insertIfAbsent(db: Executor, list: ProtocolValues[]): Promise<string[]> {
  if (list.length === 0) return [];
  const rows = await db
    .insertInto('protocols')
    .values(list.map(rowOf))
    .onConflict((oc) => oc.doNothing())
    .returning('id')
    .execute();
  return rows.map((r) => r.id);
}

export function update(db: Executor, id: string, definition: ProtocolDefinition, userId: number) {
  return db
    .updateTable('protocols')
    .set({
      name: definition.name,
      definition: JSON.stringify(definition),
      updated_by_user_id: userId,
      updated_at: dbNow(),
    })
    .where('id', '=', id)
    .returning(columns)
    .executeTakeFirst();
}

/** Row lock for read-check-write of one record. */
export function lock(db: Executor, id: string) {
  return db.selectFrom('protocols').select('id').where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Shared row lock: the base a new protocol references cannot change kind under it. */
export function lockShared(db: Executor, id: string) {
  return db.selectFrom('protocols').select(columns).where('id', '=', id).forShare().executeTakeFirst();
}
