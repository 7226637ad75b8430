import type { CreatedAt, Json, UpdatedAt } from '../../platform/db/schema.js';

export type TrainingJobKind = 'ingest_file' | 'ingest_screenshot';
export type TrainingJobStatus = 'queued' | 'running' | 'completed' | 'failed';
export type TrainingJobStage = 'queued' | 'extracting' | 'synthesising' | 'storing' | 'done';

export interface TrainingJobsTable {
  id: string;
  kind: TrainingJobKind;
  npc_user_id: number;
  created_by: number | null;
  file_name: string;
  mime_type: string;
  title: string | null;
  languages: Json<string[]>;
  status: TrainingJobStatus;
  stage: TrainingJobStage;
  progress: number;
  memory_ids: Json<number[]>;
  truncated: boolean;
  offline: boolean;
  error: Json<Record<string, unknown> | null> | null;
  data: Buffer | null;
  created_at: CreatedAt;
  updated_at: UpdatedAt;
}

export interface TrainingByHeartTable {
  id: string;
  npc_user_id: number;
  created_by: number | null;
  title: string;
  parts: number;
  memory_ids: Json<number[]>;
  created_at: CreatedAt;
}

declare module '../../platform/db/schema.js' {
  interface Database {
    training_jobs: TrainingJobsTable;
    training_by_heart: TrainingByHeartTable;
  }
}
