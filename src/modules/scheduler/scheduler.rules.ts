// Pure rules of scheduled tasks (contract: "Admin zones"): the kinds and their payloads, and what
// a cron expression and a time zone must look like before the scheduler evaluates them.
import { z } from 'zod';

const observerId = z.number().int().positive();
const hours = z.number().int().min(1).max(720);

/** The three kinds and their payloads. */
export const TASK_KINDS = {
  observer_cycle: z
    .object({ observerId, hours: hours.optional(), limit: z.number().int().min(1).max(200).optional() })
    .strict(),
  diary_compliance: z.object({ observerId, hours: hours.optional() }).strict(),
  maintenance_sweep: z.object({}).strict(),
} as const;
export type TaskKind = keyof typeof TASK_KINDS;
export const KIND_NAMES = Object.keys(TASK_KINDS) as TaskKind[];

export function isKind(kind: string): kind is TaskKind {
  return Object.hasOwn(TASK_KINDS, kind);
}

/** A problem with a cron expression's shape, or null: exactly five fields (minute, hour, day of
 * month, month, day of week), no `@` shorthands and no recurrence rules. Values are then checked
 * by the scheduler's own parser. */
export function cronShapeProblem(cron: string): string | null {
  const fields = cron.trim().split(/\s+/);
  if (cron.trim() === '' || fields.length !== 5)
    return `a cron expression has 5 fields (minute hour day-of-month month day-of-week); this has ${cron.trim() === '' ? 0 : fields.length}`;
  if (!fields.every((f) => /^[0-9*,/\-A-Za-z?LW#]+$/.test(f)))
    return 'a cron field holds digits, names and * , / - only';
  return null;
}

/** An IANA time-zone name the runtime knows ("UTC", "Europe/Paris"); not an offset or an abbreviation. */
export function isTimeZone(tz: string): boolean {
  if (!/^(UTC|[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)+)$/.test(tz)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
