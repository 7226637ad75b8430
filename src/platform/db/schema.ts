// Kysely's view of the database. Each module declares its own tables by augmenting this
// interface in its own `<m>.tables.ts` (declaration merging), so no module edits another's file:
//
//   declare module '../../platform/db/schema.js' {
//     interface Database { memories: MemoriesTable }
//   }
import type { ColumnType, Generated } from 'kysely';

export interface Database {
  schema_migrations: { name: string; applied_at: Generated<Date> };
  rate_limit_counters: { key: string; count: number; reset_at: Date };
}

/** A timestamp column filled by the database on insert. */
export type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
/** A timestamp column the database fills on insert and the code may update. */
export type UpdatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
/** A JSON column: objects in, objects out; optional on insert (the column has a default). */
export type Json<T = Record<string, unknown>> = ColumnType<T, T | string | undefined, T | string>;
export type { Generated };
