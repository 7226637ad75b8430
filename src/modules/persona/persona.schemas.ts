import { z } from 'zod';
import { PERSONAS } from './persona.rules.js';

export const personaSchema = z.enum(PERSONAS);

export const personaSessionSchema = z
  .object({
    id: z.uuid(),
    persona: personaSchema,
    personaType: z
      .string()
      .describe("routing's persona type: Observer observer, Sister sister, Worker coder"),
    observerId: z.number().int(),
    userId: z.number().int(),
    conversationId: z.number().int(),
    createdAt: z.iso.datetime(),
    lastActiveAt: z.iso.datetime(),
  })
  .meta({ id: 'PersonaSession' });
export type PersonaSessionView = z.infer<typeof personaSessionSchema>;

export const createSessionBody = z.object({
  persona: personaSchema,
  observerId: z.number().int().positive().optional().describe('default: the root observer'),
});

export const listSessionsQuery = z.object({
  observerId: z.coerce.number().int().positive().optional(),
});

export const sessionHistoryQuery = z.object({
  sessionId: z.uuid(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().positive().optional().describe('only messages older than this message id'),
});
