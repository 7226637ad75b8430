// Request and response shapes of the orchestrator's routes (contract "Tasks, artifacts,
// orchestrator"); the run itself is `runSchema` (workflows.schemas.ts).
import { z } from 'zod';
import { runSchema } from './workflows.schemas.js';

export const orchestrateBody = z
  .strictObject({
    runTasks: z.boolean().default(true).describe('false: seed and assign tasks only'),
    concurrency: z.number().int().min(1).max(8).default(3).describe('tasks run at once'),
  })
  .default({ runTasks: true, concurrency: 3 })
  .meta({ examples: [{ runTasks: true, concurrency: 2 }] });
export type OrchestrateInput = z.output<typeof orchestrateBody>;

export const runIdParam = z.object({
  id: z.uuid().meta({ examples: ['7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d'] }),
});
export const runListResponse = z.object({ runs: z.array(runSchema) });
