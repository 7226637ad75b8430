// Offset pagination, one definition for every list route: the query fields and the fields the
// answer echoes beside its total.
import { z } from 'zod';

/** `?limit=&offset=`: 1–200 items (50 by default) from `offset` (0 by default; `maxOffset` caps
 * how deep a caller may page where a deep OFFSET would cost a long scan). */
export function pageFields({ maxOffset }: { maxOffset?: number } = {}) {
  const offset = z.coerce.number().int().min(0);
  return {
    limit: z.coerce.number().int().min(1).max(200).default(50),
    offset: (maxOffset === undefined ? offset : offset.max(maxOffset)).default(0),
  };
}

/** The query of a plain list route: `limit` and `offset` only. */
export const pageQuery = z.object(pageFields());

/** What a list answer carries beside its items: `{ total, limit, offset }`. */
export const pageMeta = {
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
};
