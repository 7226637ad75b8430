// NPC training (contract: "Training (admin)"): verbatim texts and by-heart texts stored at once;
// files and screenshots checked here (type from the bytes, size, pages, readability) and handed
// to a durable job (training.jobs.ts); simulated conversations (training.simulation.ts). Memories
// are written through the memory module, which owns them; who is a character is the characters
// module's answer.
import { randomUUID } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { imageSize } from 'image-size';
import { transaction } from '../../platform/db/database.js';
import { enqueueLater } from '../../platform/jobs/later.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import { safeFileName } from '../files/index.js';
import { ExtractionError } from './training.extract.js';
import * as repo from './training.repository.js';
import {
  byHeartParts,
  MAX_IMAGE_PIXELS,
  MIME_OF,
  parseLanguages,
  screenshotType,
  textSlices,
  trainingFileType,
  type Persona,
} from './training.rules.js';
import type { TrainingJob, TrainingProgress } from './training.schemas.js';
import { simulate, type SimulationInput } from './training.simulation.js';
import {
  TRAINING_JOB,
  type IncomingTrainingFile,
  type TrainingDeps,
  type TrainingLimits,
} from './training.types.js';

/** How long the request waits for a document to be opened (page count, readability). */
const INSPECT_TIMEOUT_MS = 30_000;

export function presentJob(r: repo.JobRow): TrainingJob {
  return {
    id: r.id,
    kind: r.kind,
    npcUserId: r.npc_user_id,
    fileName: r.file_name,
    mimeType: r.mime_type,
    status: r.status,
    stage: r.stage,
    progress: r.progress,
    memoryIds: r.memory_ids,
    truncated: r.truncated,
    offline: r.offline,
    error: (r.error as TrainingJob['error']) ?? null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

export function progressOf(r: repo.JobRow): TrainingProgress {
  return {
    jobId: r.id,
    kind: r.kind,
    status: r.status,
    stage: r.stage,
    progress: r.progress,
    memoryIds: r.memory_ids,
  };
}

export class TrainingService {
  constructor(
    private readonly d: TrainingDeps,
    private readonly limits: TrainingLimits,
  ) {}

  /** A character (an NPC or the assistant), else 400 naming the field. */
  async character(id: number, path: string): Promise<Persona> {
    try {
      const npc = await this.d.characters.getNpc(id);
      return {
        id: npc.id,
        name: npc.name,
        description: npc.description,
        personality: npc.personality,
        speakingStyle: npc.speakingStyle,
        goals: npc.goals,
      };
    } catch (err) {
      if (err instanceof AppError && err.code === 'not_found')
        throw validationFailed([
          { path, message: `user ${id} is not a character (an NPC or the assistant)` },
        ]);
      throw err;
    }
  }

  /** A job's change is told to the admin who started it, once committed. */
  report(row: repo.JobRow): void {
    if (row.created_by !== null)
      this.d.bus.publish('training.progress', { userId: row.created_by, progress: progressOf(row) });
  }

  // -----------------------------------------------------------------------------------------------
  // Texts

  /** Verbatim memories (`manual_ingestion_text`), split at paragraph or sentence ends. */
  async ingestText(callerId: number, body: { npcUserId: number; text: string; title?: string | undefined }) {
    await this.character(body.npcUserId, 'body.npcUserId');
    const parts = textSlices(body.text, this.limits.memoryBytes);
    const memories = await this.d.memory.addMemories(
      parts.map((content, i) => ({
        userId: body.npcUserId,
        content,
        source: 'manual_ingestion_text' as const,
        metadata: {
          ...(body.title ? { title: body.title } : {}),
          part: i + 1,
          parts: parts.length,
        },
        createdBy: callerId,
      })),
    );
    return {
      npcUserId: body.npcUserId,
      source: 'manual_ingestion_text' as const,
      memoryIds: memories.map((m) => m.id),
    };
  }

  /** A text learnt by heart: consecutive verbatim parts (`document_ingestion`) and the record
   * that names them in order, in one transaction. */
  async ingestByHeart(callerId: number, body: { npcUserId: number; title: string; text: string }) {
    await this.character(body.npcUserId, 'body.npcUserId');
    const parts = byHeartParts(body.text);
    const byHeartId = randomUUID();
    const memoryIds = await transaction(this.d.db, async (uow) => {
      const { trx } = uow;
      const memories = await this.d.memory.addMemories(
        parts.map((content, i) => ({
          userId: body.npcUserId,
          content,
          source: 'document_ingestion' as const,
          metadata: { byHeartId, title: body.title, part: i + 1, parts: parts.length },
          createdBy: callerId,
        })),
        uow,
      );
      const ids = memories.map((m) => m.id);
      await repo.insertByHeart(trx, {
        id: byHeartId,
        npcUserId: body.npcUserId,
        createdBy: callerId,
        title: body.title,
        memoryIds: ids,
      });
      return ids;
    });
    return { byHeartId, npcUserId: body.npcUserId, title: body.title, parts: parts.length, memoryIds };
  }

  /** The by-heart text, reassembled exactly from its parts. A part deleted since is 409. */
  async byHeart(byHeartId: string) {
    const row = UUID.test(byHeartId) ? await repo.findByHeart(this.d.db, byHeartId) : undefined;
    if (!row) throw notFound('by-heart text');
    const memories = await this.d.memory.byIds(row.memory_ids);
    if (memories.length !== row.memory_ids.length)
      throw new AppError('conflict', 'A part of this text has been deleted since it was learnt', {
        missing: row.memory_ids.filter((id) => !memories.some((m) => m.id === id)),
      });
    return {
      byHeartId: row.id,
      npcUserId: row.npc_user_id,
      title: row.title,
      parts: row.parts,
      text: memories.map((m) => m.content).join(''),
    };
  }

  // -----------------------------------------------------------------------------------------------
  // Files and screenshots: checked here, worked on by the job

  /** `ingest-file`: 415 for another type, 413 over the size or page limit, 400 when the file
   * cannot be opened as its type; then the job, queued. */
  async submitFile(
    callerId: number,
    fields: { npcUserId: number; title?: string | undefined },
    file: IncomingTrainingFile | undefined,
  ) {
    await this.character(fields.npcUserId, 'body.npcUserId');
    if (!file)
      throw validationFailed([{ path: 'body.file', message: 'send the document as the part `file`' }]);
    const name = safeFileName(file.name);
    if (file.data.length > this.limits.fileBytes) throw tooLarge(name, this.limits.fileBytes);
    if (file.data.length === 0) throw validationFailed([{ path: 'body.file', message: `${name} is empty` }]);
    const type = trainingFileType((await fileTypeFromBuffer(file.data))?.mime, file.data);
    if (!type)
      throw new AppError(
        'unsupported_media_type',
        `${name}: a training file is a PDF, a DOCX or UTF-8 text (TXT, Markdown, CSV…)`,
        { file: name },
      );
    if (type !== 'text') {
      let pages: number | null;
      try {
        ({ pages } = await this.d.extractor.run(
          { op: 'inspect', type, data: file.data },
          INSPECT_TIMEOUT_MS,
        ));
      } catch (err) {
        if (!(err instanceof ExtractionError)) throw err;
        if (err.tooLarge) throw new AppError('payload_too_large', `${name}: ${err.message}`, { file: name });
        throw validationFailed(
          [{ path: 'body.file', message: `cannot be opened as ${type.toUpperCase()}: ${err.message}` }],
          `${name} cannot be read`,
        );
      }
      if (pages !== null && pages > this.limits.maxPages)
        throw new AppError(
          'payload_too_large',
          `${name} has ${pages} pages; a training PDF may have at most ${this.limits.maxPages}`,
          { maxPages: this.limits.maxPages, pages },
        );
    }
    return this.enqueue({
      kind: 'ingest_file',
      npcUserId: fields.npcUserId,
      createdBy: callerId,
      fileName: name,
      mimeType: MIME_OF[type],
      title: fields.title ?? null,
      languages: [],
      offline: this.d.models.offline,
      data: file.data,
    });
  }

  /** `ingest-screenshot`: PNG, JPEG or WebP (415), at most TRAINING_IMAGE_LIMIT bytes and 40
   * megapixels (413), known languages (400); then the job, queued. */
  async submitScreenshot(
    callerId: number,
    fields: { npcUserId: number; languages?: string | undefined },
    file: IncomingTrainingFile | undefined,
  ) {
    await this.character(fields.npcUserId, 'body.npcUserId');
    const langs = parseLanguages(fields.languages);
    if (!langs.ok) throw validationFailed([{ path: 'body.languages', message: langs.message }]);
    if (!file) throw validationFailed([{ path: 'body.file', message: 'send the image as the part `file`' }]);
    const name = safeFileName(file.name);
    if (file.data.length > this.limits.imageBytes) throw tooLarge(name, this.limits.imageBytes);
    const mimeType = screenshotType((await fileTypeFromBuffer(file.data))?.mime);
    if (!mimeType)
      throw new AppError('unsupported_media_type', `${name}: a screenshot is a PNG, JPEG or WebP image`, {
        file: name,
      });
    let size: { width: number; height: number };
    try {
      size = imageSize(file.data);
    } catch (err) {
      throw validationFailed(
        [{ path: 'body.file', message: `cannot be read as an image: ${(err as Error).message}` }],
        `${name} cannot be read`,
      );
    }
    if (size.width * size.height > MAX_IMAGE_PIXELS)
      throw new AppError(
        'payload_too_large',
        `${name} is ${size.width}×${size.height}; a screenshot may have at most 40 megapixels`,
        { maxPixels: MAX_IMAGE_PIXELS, pixels: size.width * size.height },
      );
    return this.enqueue({
      kind: 'ingest_screenshot',
      npcUserId: fields.npcUserId,
      createdBy: callerId,
      fileName: name,
      mimeType,
      title: null,
      languages: langs.languages,
      offline: false,
      data: file.data,
    });
  }

  /** The job row and its queue entry in one transaction: one exists exactly when the other does. */
  private async enqueue(job: Omit<repo.NewJob, 'id'>) {
    const row = await transaction(this.d.db, async (uow) => {
      const created = await repo.insertJob(uow.trx, { id: randomUUID(), ...job });
      void enqueueLater(uow, TRAINING_JOB, { jobId: created.id });
      uow.afterCommit(() => this.report(created));
      return created;
    });
    return { jobId: row.id, status: 'queued' as const };
  }

  async job(jobId: string): Promise<TrainingJob> {
    const row = UUID.test(jobId) ? await repo.findJob(this.d.db, jobId) : undefined;
    if (!row) throw notFound('training job');
    return presentJob(row);
  }

  async jobs(q: { status?: repo.JobRow['status'] | undefined; limit: number }) {
    return { jobs: (await repo.listJobs(this.d.db, q)).map(presentJob) };
  }

  // -----------------------------------------------------------------------------------------------
  // Simulation

  async simulate(callerId: number, input: SimulationInput) {
    const cast: Persona[] = [];
    for (const [i, id] of input.participantIds.entries())
      cast.push(await this.character(id, `body.participantIds.${i}`));
    return simulate(this.d, callerId, input, cast);
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function tooLarge(name: string, limit: number): AppError {
  return new AppError('payload_too_large', `${name} is larger than ${limit} bytes`, { limit });
}
