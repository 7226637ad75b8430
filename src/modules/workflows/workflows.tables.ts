import type { ColumnType, Generated } from 'kysely';
import type { CreatedAt, Json, UpdatedAt } from '../../platform/db/schema.js';
import type { WorkflowDefinition } from './workflows.definitions.js';

export * from './workflows.vocabulary.js';
import type {
  TaskStatus,
  Specialty,
  ArtifactStatus,
  ReviewStatus,
  RunStatus,
  RunTrigger,
} from './workflows.vocabulary.js';
export type IssueStatus = 'pending' | 'created' | 'failed';
/** An issue in the tracker, as an artifact names it. */
export interface IssueRef {
  number: number;
  url: string;
}

type Nullable<T> = ColumnType<T | null, T | null | undefined, T | null>;

export interface WorkflowDefinitionsTable {
  id: string;
  version: number;
  protocol_id: string;
  definition: Json<WorkflowDefinition>;
  created_at: CreatedAt;
}

export interface WorkflowInstancesTable {
  id: Generated<string>;
  machine_id: string;
  protocol_id: string;
  state: string;
  context: Json;
  channel_id: string | null;
  guild_id: string | null;
  created_by_user_id: number | null;
  updated_by_user_id: number | null;
  version: Generated<number>;
  state_visit: Generated<number>;
  state_entered_at: UpdatedAt;
  registry_instance_id: number | null;
  active_run_id: Nullable<string>;
  archived_at: Nullable<Date>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface WorkflowApprovalsTable {
  id: Generated<string>;
  instance_id: string;
  state: string;
  state_visit: number;
  approved_by_user_id: number | null;
  approved_by_name: string;
  note: string | null;
  created_at: CreatedAt;
}

export interface WorkflowTasksTable {
  id: Generated<string>;
  instance_id: string;
  title: string;
  description: Generated<string>;
  status: ColumnType<TaskStatus, TaskStatus | undefined, TaskStatus>;
  specialty: ColumnType<Specialty, Specialty | undefined, Specialty>;
  assigned_persona_id: Nullable<number>;
  assigned_human: Nullable<string>;
  notes: Generated<string>;
  metadata: Json;
  run_count: Generated<number>;
  /** Creation order (rows of one statement share created_at). */
  seq: Generated<number>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface WorkflowArtifactsTable {
  id: Generated<string>;
  instance_id: string;
  task_id: string | null;
  persona_id: number | null;
  summary: Generated<string>;
  content: Generated<string>;
  status: ColumnType<ArtifactStatus, ArtifactStatus | undefined, ArtifactStatus>;
  review_status: ColumnType<ReviewStatus, ReviewStatus | undefined, ReviewStatus>;
  reviewed_by_user_id: Nullable<number>;
  review_notes: Nullable<string>;
  metadata: Json;
  seq: Generated<number>;
  created_at: CreatedAt;
  reviewed_at: Nullable<Date>;
  /** The newest issue filed listing it (workflow_issues), or null. */
  issue: Nullable<IssueRef>;
}

/** An issue filed for one collectArtifacts entry (workflows.issues.ts). */
export interface WorkflowIssuesTable {
  id: string;
  instance_id: string;
  state: string;
  state_visit: number;
  artifact_ids: string[];
  title: string;
  body: string;
  status: ColumnType<IssueStatus, IssueStatus | undefined, IssueStatus>;
  attempts: Generated<number>;
  number: Nullable<number>;
  url: Nullable<string>;
  last_error: Nullable<string>;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface RunProgress {
  total: number;
  completed: number;
  failed: number;
}

export interface WorkflowRunsTable {
  id: Generated<string>;
  instance_id: string;
  status: ColumnType<RunStatus, RunStatus | undefined, RunStatus>;
  trigger: RunTrigger;
  task_ids: Json<string[]>;
  progress: Json<RunProgress>;
  error: Nullable<Record<string, unknown>>;
  created_by_user_id: number | null;
  created_at: CreatedAt;
  finished_at: Nullable<Date>;
  run_tasks: Generated<boolean>;
  concurrency: Generated<number>;
  lease_until: Nullable<Date>;
  started_at: Nullable<Date>;
}

export type TaskRunStatus = 'running' | 'completed' | 'failed' | 'skipped';

/** One task executed by one run: claimed once (primary key), with the artifact it writes. */
export interface WorkflowTaskRunsTable {
  run_id: string;
  task_id: string;
  artifact_id: Nullable<string>;
  persona_id: Nullable<number>;
  status: ColumnType<TaskRunStatus, TaskRunStatus | undefined, TaskRunStatus>;
  wall_ms: Nullable<number>;
  model_ms: Nullable<number>;
  claimed_at: CreatedAt;
  finished_at: Nullable<Date>;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    workflow_definitions: WorkflowDefinitionsTable;
    workflow_instances: WorkflowInstancesTable;
    workflow_approvals: WorkflowApprovalsTable;
    workflow_tasks: WorkflowTasksTable;
    workflow_artifacts: WorkflowArtifactsTable;
    workflow_runs: WorkflowRunsTable;
    workflow_task_runs: WorkflowTaskRunsTable;
    workflow_issues: WorkflowIssuesTable;
  }
}
