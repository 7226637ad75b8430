// The training module's event on the default namespace (`trainingProgress`) in words and by
// example, from its zod schema (the AsyncAPI document and `/docs`); the compiler holds it to the
// event map. app.ts adds it to the chat namespace's events: both share the namespace `/`.
import type { ServerEventDocs } from '../../platform/realtime/asyncapi.js';
import { trainingProgress } from './training.schemas.js';
import type { TrainingServerEvents } from './training.socket.js';

export const trainingEventDocs = {
  trainingProgress: {
    summary: "A training job's progress changed",
    description:
      'Sent to the sockets of the administrator who started a training job (POST /api/training/ingest-file or ingest-screenshot), on every node, after each committed change of the job: queued, then its stages (extracting, synthesising, storing) with `progress` in [0, 1], and at the end `completed` with the ids of the memories stored, or `failed` (its problem is in GET /api/training/jobs/{jobId}).',
    payload: trainingProgress,
    example: {
      jobId: '1a3c5e7f-9b2d-4f6a-8c0e-2a4c6e8a0c2e',
      kind: 'ingest_file',
      status: 'running',
      stage: 'synthesising',
      progress: 0.5,
      memoryIds: [],
    },
  },
} satisfies ServerEventDocs<TrainingServerEvents>;
