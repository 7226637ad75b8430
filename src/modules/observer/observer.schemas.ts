import { z } from 'zod';

/** `/observer` handshake: `auth: { token, observerId }`. */
export const observerHandshake = z.object({ observerId: z.coerce.number().int().positive() });
