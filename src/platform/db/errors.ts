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

const DISK_FULL = '53100';

/** A write failed for lack of disk space: PostgreSQL's (and PGlite's) disk_full, or the file
 * system's ENOSPC. Nothing of the statement was stored. */
export function isDiskFull(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown };
  return (
    e.code === DISK_FULL ||
    e.code === 'ENOSPC' ||
    (typeof e.message === 'string' && /No space left on device/.test(e.message))
  );
}

/** When a write last failed for lack of space in this process (0: never), for health. */
let diskFullAt = 0;
export const noteDiskFull = (): void => {
  diskFullAt = Date.now();
};
export const lastDiskFull = (): number => diskFullAt;
/** Space is back (health's probe found it): writes are expected to work again. */
export const clearDiskFull = (): void => {
  diskFullAt = 0;
};
