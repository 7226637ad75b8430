// The orchestrator's routes (contract "Tasks, artifacts, orchestrator"): start a run, read one,
// list an instance's. Participants only; anyone else gets 404.
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { requestActor } from './workflows.actor.js';
import type { WorkflowRunsService } from './workflows.runs.js';
import { orchestrateBody, runIdParam, runListResponse } from './workflows.runs.schemas.js';
import { idParam, runSchema } from './workflows.schemas.js';

export interface WorkflowRunsRoutesOptions {
  workflowRuns: WorkflowRunsService;
}

export function workflowRunsRoutes(app: App, { workflowRuns }: WorkflowRunsRoutesOptions) {
  const tags = ['workflows'];
  const actor = requestActor;

  app.post(
    '/api/protocol/instances/:id/orchestrate',
    {
      schema: {
        tags,
        summary:
          'Start an orchestrator run: seed tasks, assign personas by specialty, run tasks (409 conflict with `run` while one is queued or running)',
        description:
          'Starts an orchestrator run (202): it seeds tasks when there are none, assigns each to an NPC by specialty, and works on the pending tasks with the model, producing artifacts. 409 `conflict` with the current `run` while one is queued or running.',
        params: idParam,
        body: orchestrateBody,
        response: { 202: runSchema, ...problems(400, 401, 404, 409) },
      },
    },
    async (req, reply) =>
      reply.status(202).send(await workflowRuns.orchestrate(actor(req), req.params.id, req.body)),
  );

  app.get(
    '/api/protocol/instances/:id/runs',
    {
      schema: {
        tags,
        summary: "The instance's orchestrator runs, newest first",
        description: "The instance's orchestrator runs, newest first, with status and progress.",
        params: idParam,
        response: { 200: runListResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => ({ runs: await workflowRuns.list(actor(req), req.params.id) }),
  );

  app.get(
    '/api/protocol/runs/:id',
    {
      schema: {
        tags,
        summary: 'An orchestrator run: status, tasks and progress',
        description:
          'One orchestrator run: status, trigger, the tasks it works on, progress (completed, blocked) and its error if it failed.',
        params: runIdParam,
        response: { 200: runSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => workflowRuns.get(actor(req), req.params.id),
  );
}
