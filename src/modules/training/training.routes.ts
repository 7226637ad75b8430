// /api/training/* (contract: "Training (admin)"): admins only. Files and screenshots arrive as
// multipart/form-data, parsed in this module's scope only, with the training limits.
import multipart from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { z } from 'zod';
import { currentUser } from '../../platform/http/auth.js';
import { parseOrThrow, unsafeTextErrors, validationFailed } from '../../platform/http/problem.js';
import type { App } from '../../platform/http/types.js';
import { problems } from '../../platform/http/types.js';
import { multipartProblem } from '../files/index.js';
import {
  byHeartBody,
  byHeartParams,
  byHeartResponse,
  byHeartText,
  fileFields,
  ingestTextBody,
  ingestTextResponse,
  jobAccepted,
  jobList,
  jobParams,
  jobsQuery,
  simulationBody,
  simulationResponse,
  trainingJob,
} from './training.schemas.js';
import type { TrainingService } from './training.service.js';
import type { IncomingTrainingFile } from './training.types.js';

export interface TrainingRoutesOptions {
  training: TrainingService;
  /** Bytes of a training file and of a screenshot. */
  limits: { fileBytes: number; imageBytes: number };
}

/** The form's text fields and its one part `file` (a second file part is refused unread). */
async function readForm(
  req: FastifyRequest,
  fileBytes: number,
): Promise<{ fields: Record<string, string>; file: IncomingTrainingFile | undefined }> {
  const fields: Record<string, string> = {};
  let file: IncomingTrainingFile | undefined;
  try {
    for await (const part of req.parts({ limits: { fileSize: fileBytes, files: 2 } })) {
      const unsafe = unsafeTextErrors({ [part.fieldname]: part.type === 'field' ? part.value : '' }, 'body');
      if (unsafe) throw validationFailed(unsafe);
      if (part.type === 'field') {
        if (typeof part.value === 'string') fields[part.fieldname] = part.value;
        continue;
      }
      if (part.fieldname !== 'file' || file)
        throw validationFailed([
          { path: `body.${part.fieldname}`, message: 'send one file, as the part `file`' },
        ]);
      file = { name: part.filename, data: await part.toBuffer() };
    }
  } catch (err) {
    throw multipartProblem(err, { fileBytes, files: 1 });
  }
  return { fields, file };
}

export function trainingRoutes(app: App, { training, limits }: TrainingRoutesOptions) {
  const tags = ['training'];
  const config = { auth: 'admin' as const };

  app.post(
    '/api/training/ingest-text',
    {
      config,
      schema: {
        tags,
        summary: 'Store a text verbatim as memories of a character (`manual_ingestion_text`); no model call',
        description:
          'The text (at most 256 KiB) is split at paragraph or sentence ends into memories of at most MEMORY_MAX_CONTENT bytes. `npcUserId` must be a character (an NPC or the assistant), else 400.',
        body: ingestTextBody,
        response: { 201: ingestTextResponse, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await training.ingestText(currentUser(req).id, req.body)),
  );

  app.post(
    '/api/training/ingest-text-by-heart',
    {
      config,
      schema: {
        tags,
        summary: 'Teach a character a text by heart: consecutive verbatim parts that reassemble exactly',
        description:
          'Parts of at most 2,000 characters, cut after a sentence end or a space when possible, never trimmed or overlapped, stored as `document_ingestion` memories with metadata `{ byHeartId, title, part, parts }`.',
        body: byHeartBody,
        response: { 201: byHeartResponse, ...problems(400, 401, 403) },
      },
    },
    async (req, reply) => reply.status(201).send(await training.ingestByHeart(currentUser(req).id, req.body)),
  );

  app.get(
    '/api/training/by-heart/:byHeartId',
    {
      config,
      schema: {
        tags,
        summary: 'A text learnt by heart, reassembled exactly from its parts',
        params: byHeartParams,
        response: { 200: byHeartText, ...problems(401, 403, 404, 409) },
      },
    },
    async (req) => training.byHeart(req.params.byHeartId),
  );

  // Multipart parsing is registered in this scope only.
  void app.register(async (parent) => {
    const scope = parent.withTypeProvider<ZodTypeProvider>();
    await scope.register(multipart, {
      limits: { fields: 10, fieldSize: 64 * 1024, parts: 12, headerPairs: 100 },
      throwFileSizeLimit: true,
    });

    /** A route that takes a file and answers 202 with its job. */
    const jobRoute = <F extends z.ZodType>(
      path: string,
      doc: { summary: string; description: string },
      fileBytes: number,
      fields: F,
      submit: (
        userId: number,
        fields: z.output<F>,
        file: IncomingTrainingFile | undefined,
      ) => Promise<{ jobId: string; status: 'queued' }>,
    ) =>
      scope.post(
        path,
        {
          config,
          schema: {
            tags,
            ...doc,
            consumes: ['multipart/form-data'],
            response: { 202: jobAccepted, ...problems(400, 401, 403, 413, 415) },
          },
        },
        async (req, reply) => {
          const user = currentUser(req);
          const form = await readForm(req, fileBytes);
          const accepted = await submit(user.id, parseOrThrow(fields, form.fields, 'body'), form.file);
          return reply.status(202).header('location', `/api/training/jobs/${accepted.jobId}`).send(accepted);
        },
      );

    jobRoute(
      '/api/training/ingest-file',
      {
        summary:
          'Train a character on a document: a job extracts it and synthesises first-person core beliefs',
        description:
          'multipart/form-data: `npcUserId`, `title?`, one part `file`. The type is sniffed from the bytes: PDF, DOCX or UTF-8 text (415 otherwise). ' +
          'Over TRAINING_FILE_LIMIT bytes: 413 with `limit`; a PDF over TRAINING_MAX_PAGES pages: 413 with `maxPages`; a file that cannot be opened as its type: 400. ' +
          'Answers 202 with the job (`Location: /api/training/jobs/<jobId>`); its progress is sent as `trainingProgress` to the caller’s sockets.',
      },
      limits.fileBytes,
      fileFields.omit({ languages: true }),
      (userId, fields, file) => training.submitFile(userId, fields, file),
    );

    jobRoute(
      '/api/training/ingest-screenshot',
      {
        summary: 'Train a character on a screenshot: a job reads its text (OCR) into one memory',
        description:
          'multipart/form-data: `npcUserId`, `languages?` (comma list of eng, fra; default both), one part `file`: PNG, JPEG or WebP (415 otherwise). ' +
          'Over TRAINING_IMAGE_LIMIT bytes or 40 megapixels: 413. Answers 202 with the job.',
      },
      limits.imageBytes,
      fileFields.omit({ title: true }),
      (userId, fields, file) => training.submitScreenshot(userId, fields, file),
    );
  });

  app.get(
    '/api/training/jobs',
    {
      config,
      schema: {
        tags,
        summary: 'Training jobs, newest first',
        querystring: jobsQuery,
        response: { 200: jobList, ...problems(400, 401, 403) },
      },
    },
    async (req) => training.jobs(req.query),
  );

  app.get(
    '/api/training/jobs/:jobId',
    {
      config,
      schema: {
        tags,
        summary: 'A training job: its stage, progress, memories and error',
        params: jobParams,
        response: { 200: trainingJob, ...problems(401, 403, 404) },
      },
    },
    async (req) => training.job(req.params.jobId),
  );

  app.post(
    '/api/training/simulation',
    {
      config,
      schema: {
        tags,
        summary: 'Simulate a conversation between characters, stored as messages of a conversation',
        description:
          'One structured model call writes the turns (the initiator first; turns of characters not taking part dropped). Offline, the characters speak in turn from the initiator. ' +
          'Without `conversationId` a new conversation of the caller is made; a given one must be the caller’s (404). A model failure is 503 and stores nothing.',
        body: simulationBody,
        response: { 201: simulationResponse, ...problems(400, 401, 403, 404, 503) },
      },
    },
    async (req, reply) => reply.status(201).send(await training.simulate(currentUser(req).id, req.body)),
  );
}
