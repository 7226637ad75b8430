import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../../platform/db/database.js';
import type { AppPlugin } from '../../platform/http/types.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { ModelGateway } from '../../platform/models/gateway.js';
import type { AccountState } from '../../platform/security/account-state.js';
import { isAdmin } from '../../platform/security/identity.rules.js';
import type { CharactersService } from '../characters/index.js';
import type { ProtocolsService } from '../protocols/index.js';
import { WorkflowIssues } from './workflows.issues.js';
import { WorkflowRunJobs } from './workflows.jobs.js';
import { WorkflowOrchestrator } from './workflows.orchestrator.js';
import { specialtiesOf } from './workflows.orchestrator.rules.js';
import { workflowsRoutes, type WorkflowsRoutesOptions } from './workflows.routes.js';
import { WorkflowRunsService } from './workflows.runs.js';
import { workflowRunsRoutes, type WorkflowRunsRoutesOptions } from './workflows.runs.routes.js';
import { WorkflowsService } from './workflows.service.js';
import { WorkflowTasksService } from './workflows.tasks.js';
import type { WorkflowActor, WorkflowsDeps } from './workflows.types.js';
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
export { flushInstancesWritten } from './workflows.events.js';
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

/** Builds the workflows service: definitions and instances, and the issue tracker
 * collectArtifacts files in (when configured). Its runs, suggestion settings and chat-platform
 * notifications are ports (`usePorts`) wired where those parts are built. */
export function createWorkflowsModule(
  parts: Omit<WorkflowsDeps, 'issues'> & { jobs: JobQueue; log: Logger },
  config: Pick<Config, 'tracker' | 'publicUrl' | 'appUrl'>,
): WorkflowsService {
  const { db, jobs, log } = parts;
  return new WorkflowsService({
    db,
    timeline: parts.timeline,
    protocols: parts.protocols,
    addMemory: parts.addMemory,
    isCharacter: parts.isCharacter,
    issues: config.tracker && new WorkflowIssues({ db, jobs, log }, config.tracker, config),
  });
}

export interface WorkflowExecutionParts {
  db: Db;
  jobs: JobQueue;
  log: Logger;
  models: ModelGateway;
  workflows: WorkflowsService;
  protocols: Pick<ProtocolsService, 'routeUser' | 'resolve'>;
  characters: Pick<CharactersService, 'allNpcs' | 'getNpc' | 'assistantUserId'>;
}

/** Builds the task and run operations over the workflows service, and the orchestrator that
 * executes runs in the `workflows.run` job (the service hands it each committed run: entering
 * execution, a rerun, POST .../orchestrate). The specialists are the NPCs other than the
 * assistant. */
export function createWorkflowExecution(p: WorkflowExecutionParts) {
  const { db, log, characters, protocols } = p;
  const { instances } = p.workflows;
  const workflowTasks = new WorkflowTasksService(instances);
  const workflowRuns = new WorkflowRunsService(instances);
  const orchestrator = new WorkflowOrchestrator(
    {
      db,
      instances,
      tasks: workflowTasks,
      models: p.models,
      // The instance's own channel (an admin's setting, never a client's claim): its whole reach.
      routeUser: async (userId, channelId) =>
        (await protocols.routeUser(userId, { channelId, channelLinked: true })).resolved,
      resolveProtocol: (id) => protocols.resolve(id),
      specialists: async () =>
        (await characters.allNpcs())
          .filter((n) => !n.isAssistant)
          .map((n) => ({
            id: n.id,
            specialties: specialtiesOf(n.metadata),
            name: n.name,
            description: n.description,
          })),
      persona: async (id) => {
        const npc = await characters.getNpc(id);
        return { name: npc.name, description: npc.description };
      },
      assistantUserId: () => characters.assistantUserId(),
      log,
    },
    { leaseSeconds: 60 },
  );
  const workflowRunJobs = new WorkflowRunJobs(p.jobs, db, orchestrator, log, {
    // Runs mostly wait on model calls: many at once per node.
    runsPerNode: 32,
    orphanAfterSeconds: 30,
    sweepEverySeconds: 30,
  });
  return { workflowTasks, workflowRuns, workflowRunJobs };
}

/** A workflow actor by account id (its name and admin rights as they are now), for the parts that
 * act for a user outside a request: chat-platform commands and suggestion passes. */
export function accountActor(
  accountState: (id: number) => Promise<AccountState | undefined> | AccountState | undefined,
  adminUserIds: readonly number[],
): (id: number) => Promise<WorkflowActor | undefined> {
  return async (id) => {
    const state = await accountState(id);
    return (
      state && {
        id,
        name: state.name,
        admin: isAdmin({ id, role: state.role, accountType: state.accountType }, adminUserIds),
      }
    );
  };
}
