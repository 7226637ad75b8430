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
  .meta({
    id: 'PersonaSession',
    examples: [
      {
        id: '3f2a1b4c-5d6e-4f70-8a9b-0c1d2e3f4a5b',
        persona: 'Sister',
        personaType: 'sister',
        observerId: 3,
        userId: 42,
        conversationId: 12,
        createdAt: '2025-05-01T09:30:00.000Z',
        lastActiveAt: '2025-05-01T10:05:00.000Z',
      },
    ],
  });
export type PersonaSessionView = z.infer<typeof personaSessionSchema>;

export const createSessionBody = z
  .object({
    persona: personaSchema,
    observerId: z.number().int().positive().optional().describe('default: the root observer'),
  })
  .meta({ examples: [{ persona: 'Sister', observerId: 3 }] });

export const listSessionsQuery = z.object({
  observerId: z.coerce.number().int().positive().optional(),
});

export const sessionHistoryQuery = z.object({
  sessionId: z.uuid(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  before: z.coerce.number().int().positive().optional().describe('only messages older than this message id'),
});
