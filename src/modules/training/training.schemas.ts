// The training endpoints' shapes (contract: "Training (admin)").
import { z } from 'zod';
import { problemSchema } from '../../platform/http/problem.js';
import {
  BY_HEART_TITLE_CHARS,
  DEFAULT_SIMULATION_TURNS,
  MAX_SIMULATION_TURNS,
  TEXT_MAX_BYTES,
  TOPIC_MAX_CHARS,
} from './training.rules.js';

const userId = z.number().int().positive();

const trainingText = z
  .string()
  .refine((t) => t.trim().length > 0, 'must not be empty')
  .refine(
    (t) => Buffer.byteLength(t, 'utf8') <= TEXT_MAX_BYTES,
    `must be at most ${TEXT_MAX_BYTES} bytes (256 KiB)`,
  );

export const ingestTextBody = z.object({
  npcUserId: userId.describe('The character (an NPC or the assistant) the memories belong to'),
  text: trainingText,
  title: z.string().trim().max(BY_HEART_TITLE_CHARS).optional(),
});

export const ingestTextResponse = z
  .object({
    npcUserId: z.number().int(),
    source: z.literal('manual_ingestion_text'),
    memoryIds: z.array(z.number().int()),
  })
  .meta({ id: 'TrainingTextIngested' });

export const byHeartBody = z.object({
  npcUserId: userId,
  title: z.string().trim().min(1).max(BY_HEART_TITLE_CHARS),
  text: trainingText,
});

export const byHeartResponse = z
  .object({
    byHeartId: z.uuid(),
    npcUserId: z.number().int(),
    title: z.string(),
    parts: z.number().int(),
    memoryIds: z.array(z.number().int()),
  })
  .meta({ id: 'TrainingByHeart' });

export const byHeartParams = z.object({ byHeartId: z.string() });

export const byHeartText = z
  .object({
    byHeartId: z.uuid(),
    npcUserId: z.number().int(),
    title: z.string(),
    parts: z.number().int(),
    text: z.string(),
  })
  .meta({ id: 'TrainingByHeartText' });

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export const JOB_STAGES = ['queued', 'extracting', 'synthesising', 'storing', 'done'] as const;
export const JOB_KINDS = ['ingest_file', 'ingest_screenshot'] as const;

export const trainingJob = z
  .object({
    id: z.uuid(),
    kind: z.enum(JOB_KINDS),
    npcUserId: z.number().int(),
    fileName: z.string(),
    mimeType: z.string(),
    status: z.enum(JOB_STATUSES),
    stage: z.enum(JOB_STAGES),
    progress: z.number().min(0).max(1),
    memoryIds: z.array(z.number().int()),
    truncated: z.boolean(),
    offline: z.boolean(),
    error: problemSchema.nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'TrainingJob' });
export type TrainingJob = z.infer<typeof trainingJob>;

export const jobAccepted = z
  .object({ jobId: z.uuid(), status: z.literal('queued') })
  .meta({ id: 'TrainingJobAccepted' });

export const jobParams = z.object({ jobId: z.string() });
export const jobsQuery = z.object({
  status: z.enum(JOB_STATUSES).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export const jobList = z.object({ jobs: z.array(trainingJob) });

/** The multipart text fields of `ingest-file` and `ingest-screenshot`. */
export const fileFields = z.object({
  npcUserId: z.coerce.number().int().positive(),
  title: z.string().trim().max(BY_HEART_TITLE_CHARS).optional(),
  languages: z.string().max(200).optional(),
});

export const simulationBody = z
  .object({
    conversationId: z.number().int().positive().optional(),
    initiatorId: userId,
    topic: z.string().trim().min(1).max(TOPIC_MAX_CHARS),
    turns: z.number().int().min(1).max(MAX_SIMULATION_TURNS).default(DEFAULT_SIMULATION_TURNS),
    participantIds: z
      .array(userId)
      .min(2)
      .max(6)
      .refine((ids) => new Set(ids).size === ids.length, 'must be distinct'),
  })
  .refine((b) => b.participantIds.includes(b.initiatorId), {
    path: ['participantIds'],
    message: 'must include the initiator',
  });

export const simulationResponse = z
  .object({
    simulationId: z.uuid(),
    conversationId: z.number().int(),
    topic: z.string(),
    turns: z.array(
      z.object({
        index: z.number().int(),
        npcUserId: z.number().int(),
        npcName: z.string(),
        messageId: z.number().int(),
        text: z.string(),
        createdAt: z.string(),
      }),
    ),
    offline: z.boolean(),
  })
  .meta({ id: 'TrainingSimulation' });

/** The `trainingProgress` socket event. */
export const trainingProgress = z.object({
  jobId: z.uuid(),
  kind: z.enum(JOB_KINDS),
  status: z.enum(JOB_STATUSES),
  stage: z.enum(JOB_STAGES),
  progress: z.number(),
  memoryIds: z.array(z.number().int()),
});
export type TrainingProgress = z.infer<typeof trainingProgress>;
