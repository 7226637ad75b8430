// PostgreSQL error codes the services act on (SQLSTATE, appendix A of the PostgreSQL manual), in
// one place: node-postgres passes them through as `err.code`, with the violated constraint's name.

const UNIQUE_VIOLATION = '23505';
const FOREIGN_KEY_VIOLATION = '23503';
const CHECK_VIOLATION = '23514';

function isPgError(err: unknown, code: string, constraint?: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === code && (constraint === undefined || e.constraint === constraint);
}

/** A unique (or primary key) constraint refused the row; `constraint` narrows it to one. */
export const isUniqueViolation = (err: unknown, constraint?: string) =>
  isPgError(err, UNIQUE_VIOLATION, constraint);

/** A foreign key refused the row (the row it points at is missing, or still pointed at). */
export const isForeignKeyViolation = (err: unknown, constraint?: string) =>
  isPgError(err, FOREIGN_KEY_VIOLATION, constraint);

/** A CHECK constraint refused the row. */
export const isCheckViolation = (err: unknown, constraint?: string) =>
  isPgError(err, CHECK_VIOLATION, constraint);
