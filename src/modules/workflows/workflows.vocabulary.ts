// The values of the workflow tables' status and kind columns, each declared once: the column
// types, the HTTP schemas (so the OpenAPI document and the generated client carry them) and the
// rules all read these arrays. Plain data with no import, so that the web console reads the task
// moves from here too rather than keeping a copy.
export const TASK_STATUSES = ['pending', 'in_progress', 'completed', 'blocked'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const SPECIALTIES = ['code', 'docs', 'tests', 'design', 'ops', 'general'] as const;
export type Specialty = (typeof SPECIALTIES)[number];
export const ARTIFACT_STATUSES = ['draft', 'ready'] as const;
export type ArtifactStatus = (typeof ARTIFACT_STATUSES)[number];
export const REVIEW_STATUSES = ['pending', 'approved', 'rejected'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];
export const RUN_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export const RUN_TRIGGERS = ['manual', 'state_entry', 'suggestion', 'command', 'rerun'] as const;
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** Task moves (contract "Tasks, artifacts, orchestrator"); staying put is no move. */
export const TASK_MOVES: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  pending: ['in_progress', 'blocked'],
  in_progress: ['completed', 'blocked', 'pending'],
  blocked: ['pending', 'in_progress'],
  completed: ['in_progress'],
};
