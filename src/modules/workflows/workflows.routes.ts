// The workflows routes (contract "Workflows"): definitions, instances and what their state visits
// record, tasks and artifacts. Routes parse, call a service with the request's actor, and present;
// an instance, its tasks and artifacts are for participants only (anyone else gets 404). The
// orchestrator's routes: workflows.runs.routes.ts.
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import {
  approvalBody,
  approvalListResponse,
  approvalResponse,
  artifactIdParam,
  artifactListResponse,
  artifactSchema,
  artifactsQuery,
  createInstanceBody,
  definitionListResponse,
  definitionSchema,
  evidenceBody,
  evidenceResponse,
  idParam,
  instanceListResponse,
  instanceSchema,
  listInstancesQuery,
  machineIdParam,
  putTaskBody,
  reviewBody,
  reviewResponse,
  runSchema,
  taskIdParam,
  taskListResponse,
  taskSchema,
  tasksQuery,
  timelineQuery,
  timelineResponse,
  transitionBody,
} from './workflows.schemas.js';
import { requestActor } from './workflows.actor.js';
import type { WorkflowsService } from './workflows.service.js';
import type { WorkflowTasksService } from './workflows.tasks.js';

export interface WorkflowsRoutesOptions {
  workflows: WorkflowsService;
  workflowTasks: WorkflowTasksService;
}

const tags = ['workflows'];
const actor = requestActor;

/** The workflow routes, in the order of the OpenAPI document's paths. */
export function workflowsRoutes(app: App, { workflows, workflowTasks }: WorkflowsRoutesOptions) {
  definitionRoutes(app, workflows);
  instanceRoutes(app, workflows);
  recordRoutes(app, workflows);
  taskRoutes(app, workflowTasks);
  artifactRoutes(app, workflowTasks);
}

/** The definitions (the state machines). */
function definitionRoutes(app: App, workflows: WorkflowsService) {
  app.get(
    '/api/protocol/definitions',
    {
      schema: {
        tags,
        summary: 'Workflow definitions',
        description:
          'Every workflow definition (state machine) in full: states with checklists and entry actions, transitions with their guards.',
        response: { 200: definitionListResponse, ...problems(401) },
      },
    },
    async () => ({ definitions: await workflows.listDefinitions() }),
  );

  app.get(
    '/api/protocol/definitions/:machineId',
    {
      schema: {
        tags,
        summary: 'One workflow definition: states (checklists, entry actions) and transitions (guards)',
        description:
          'One workflow definition: its states with their checklists and entry actions, and the transitions with the guards that must be satisfied (approvals, evidence).',
        params: machineIdParam,
        response: { 200: definitionSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => workflows.getDefinition(req.params.machineId),
  );
}

/** Instances: create, list, read, move. */
function instanceRoutes(app: App, workflows: WorkflowsService) {
  app.post(
    '/api/protocol/instances',
    {
      schema: {
        tags,
        summary: 'Create a workflow instance in its initial state',
        description:
          'Creates a workflow instance of a definition in its initial state, created by the caller, optionally tied to a chat-platform channel (and, for administrators, a registry instance). Entering the state records its checklist and runs its entry actions. An unknown definition or protocol is 422.',
        body: createInstanceBody,
        response: { 201: instanceSchema, ...problems(400, 401, 403, 422) },
      },
    },
    async (req, reply) => reply.status(201).send(await workflows.create(actor(req), req.body)),
  );

  app.get(
    '/api/protocol/instances',
    {
      schema: {
        tags,
        summary: 'Workflow instances, newest first (non-admins: their own)',
        description:
          'Workflow instances, newest first, filtered by definition, state, channel and archive; non-administrators see those they take part in.',
        querystring: listInstancesQuery,
        response: { 200: instanceListResponse, ...problems(400, 401) },
      },
    },
    async (req) => workflows.list(actor(req), req.query),
  );

  app.get(
    '/api/protocol/instances/:id',
    {
      schema: {
        tags,
        summary: 'A workflow instance (participants only; others 404)',
        description:
          "One workflow instance with its state, version, checklist and allowed exits. Only participants (the creator, administrators, the observer's owner) see it; others get 404.",
        params: idParam,
        response: { 200: instanceSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => workflows.get(actor(req), req.params.id),
  );

  app.post(
    '/api/protocol/instances/:id/transition',
    {
      schema: {
        tags,
        summary:
          'Move the instance to a target state (409 invalid_transition, guard_not_satisfied, conflict)',
        description:
          'Moves the instance to `targetState`. Send `expectedVersion` to refuse a stale view (409 `conflict`). A move the definition does not allow is 409 `invalid_transition` with the allowed exits; a guard that is not met is 409 `guard_not_satisfied` naming what to record.',
        params: idParam,
        body: transitionBody,
        response: { 200: instanceSchema, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) => workflows.transition(actor(req), req.params.id, req.body),
  );
}

/** What an instance's state visit records (approvals, evidence), and its timeline. */
function recordRoutes(app: App, workflows: WorkflowsService) {
  app.post(
    '/api/protocol/instances/:id/approvals',
    {
      schema: {
        tags,
        summary:
          "Record an approval of the current state visit (an admin or the observer's owner); may advance",
        description:
          "Records the caller's approval of the current state visit (an administrator or the observer's owner; other participants get 403). When it satisfies the guarded exit, the instance advances in the same write (`advanced`).",
        params: idParam,
        body: approvalBody,
        response: { 201: approvalResponse, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) =>
      reply.status(201).send(await workflows.approve(actor(req), req.params.id, req.body)),
  );

  app.get(
    '/api/protocol/instances/:id/approvals',
    {
      schema: {
        tags,
        summary: 'Approvals of the instance, oldest first',
        description: "The instance's approvals, oldest first, with the state visit each belongs to.",
        params: idParam,
        response: { 200: approvalListResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => ({ approvals: await workflows.approvals(actor(req), req.params.id) }),
  );

  app.post(
    '/api/protocol/instances/:id/evidence',
    {
      schema: {
        tags,
        summary: 'Record evidence (a verification_evidence event; proofUrl is never fetched); may advance',
        description:
          'Records evidence for the current state visit (a `verification_evidence` timeline event with a description and a proof URL that is never fetched). When it satisfies the guarded exit, the instance advances.',
        params: idParam,
        body: evidenceBody,
        response: { 201: evidenceResponse, ...problems(400, 401, 404, 409) },
      },
    },
    async (req, reply) =>
      reply
        .status(201)
        .send(await workflows.evidence(actor(req), req.params.id, { ...req.body, source: 'api' })),
  );

  app.get(
    '/api/protocol/instances/:id/timeline',
    {
      schema: {
        tags,
        summary: "The instance's timeline events, newest first",
        description:
          "The instance's timeline events (checklists, transitions, approvals, evidence, runs), newest first.",
        params: idParam,
        querystring: timelineQuery,
        response: { 200: timelineResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => ({ events: await workflows.timeline(actor(req), req.params.id, req.query.limit) }),
  );
}

/** An instance's tasks: list, edit, rerun. */
function taskRoutes(app: App, workflowTasks: WorkflowTasksService) {
  app.get(
    '/api/protocol/instances/:id/tasks',
    {
      schema: {
        tags,
        summary: "The instance's tasks",
        description: "The instance's tasks with their status, persona or human assignee, filtered by status.",
        params: idParam,
        querystring: tasksQuery,
        response: { 200: taskListResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => ({ tasks: await workflowTasks.listTasks(actor(req), req.params.id, req.query.status) }),
  );

  app.put(
    '/api/protocol/tasks/:taskId',
    {
      schema: {
        tags,
        summary: 'Update a task (status moves as allowed, else 409 invalid_transition)',
        description:
          'Updates a task: status (only the moves the contract allows, else 409 `invalid_transition`), the persona or human it is assigned to, notes, title, description, metadata. A task of a completed instance is 409.',
        params: taskIdParam,
        body: putTaskBody,
        response: { 200: taskSchema, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) => workflowTasks.putTask(actor(req), req.params.taskId, req.body),
  );

  app.post(
    '/api/protocol/tasks/:taskId/rerun',
    {
      schema: {
        tags,
        summary: 'Run this task alone again (old artifacts stay)',
        description:
          'Runs this task alone again in a new orchestrator run (202 with the run); earlier artifacts stay. 409 while the instance has a run queued or running; 503 when no worker executes runs.',
        params: taskIdParam,
        response: { 202: runSchema, ...problems(400, 401, 404, 409, 503) },
      },
    },
    async (req, reply) => reply.status(202).send(await workflowTasks.rerun(actor(req), req.params.taskId)),
  );
}

/** An instance's artifacts: list, read, review. */
function artifactRoutes(app: App, workflowTasks: WorkflowTasksService) {
  app.get(
    '/api/protocol/instances/:id/artifacts',
    {
      schema: {
        tags,
        summary: "The instance's artifacts, without content",
        description: "The instance's artifacts without their content, filtered by task and review status.",
        params: idParam,
        querystring: artifactsQuery,
        response: { 200: artifactListResponse, ...problems(400, 401, 404) },
      },
    },
    async (req) => ({ artifacts: await workflowTasks.listArtifacts(actor(req), req.params.id, req.query) }),
  );

  app.get(
    '/api/protocol/artifacts/:id',
    {
      schema: {
        tags,
        summary: 'An artifact with its content',
        description: 'An artifact with its content (participants of its instance only).',
        params: artifactIdParam,
        response: { 200: artifactSchema, ...problems(400, 401, 404) },
      },
    },
    async (req) => workflowTasks.getArtifact(actor(req), req.params.id),
  );

  app.post(
    '/api/protocol/artifacts/:id/review',
    {
      schema: {
        tags,
        summary: 'Review a ready artifact once; the last approval records evidence and may advance',
        description:
          'Approves or rejects a ready artifact, once. The approval that leaves no artifact of the instance pending records evidence, which may advance the instance.',
        params: artifactIdParam,
        body: reviewBody,
        response: { 200: reviewResponse, ...problems(400, 401, 404, 409) },
      },
    },
    async (req) => workflowTasks.review(actor(req), req.params.id, req.body),
  );
}
