import type { AppPlugin } from '../../platform/http/types.js';
import { workflowsRoutes, type WorkflowsRoutesOptions } from './workflows.routes.js';
import { workflowRunsRoutes, type WorkflowRunsRoutesOptions } from './workflows.runs.routes.js';
import './workflows.tables.js';

export { WorkflowsService, type InstanceRead } from './workflows.service.js';
export { actorOf, requestActor } from './workflows.actor.js';
export type {
  RunHandle,
  WorkflowActor,
  WorkflowNotice,
  WorkflowPorts,
  WorkflowsDeps,
} from './workflows.types.js';
export { WorkflowTasksService, type InstanceOverview } from './workflows.tasks.js';
export { WorkflowRunsService, type NewTask } from './workflows.runs.js';
export type { OrchestrateInput } from './workflows.runs.schemas.js';
export { WorkflowOrchestrator, type OrchestratorDeps } from './workflows.orchestrator.js';
export { WorkflowRunJobs, RUN_JOB } from './workflows.jobs.js';
export { WorkflowIssues, ISSUE_JOB } from './workflows.issues.js';
export { specialtiesOf } from './workflows.orchestrator.rules.js';
export { WORKFLOW_DEFINITIONS, WORKFLOW_PROTOCOLS } from './workflows.definitions.js';
export type { WorkflowDefinition, GuardName, ActionName } from './workflows.definitions.js';
export type { WorkflowInstance, Task, Artifact, Run, Approval, Advanced } from './workflows.schemas.js';
// The routes' own request schemas, for callers that reach the same operations another way (the
// chat-platform commands), so their input is checked exactly as the routes check it.
export {
  approvalBody,
  artifactIdParam,
  evidenceBody,
  idParam,
  putTaskBody,
  reviewBody,
  taskIdParam,
  transitionBody,
  TASK_STATUSES,
  proofUrlSchema,
} from './workflows.schemas.js';
export { orchestrateBody } from './workflows.runs.schemas.js';

/** The module's HTTP door (mounted by app.ts): definitions, instances, tasks, artifacts and runs. */
export const workflowsPlugin: AppPlugin<WorkflowsRoutesOptions & WorkflowRunsRoutesOptions> = async (
  app,
  opts,
) => {
  workflowsRoutes(app, opts);
  workflowRunsRoutes(app, opts);
};
