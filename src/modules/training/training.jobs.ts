// The training job (`training.ingest`, pg-boss, retried with backoff): a file is extracted (worker
// thread), normalised, truncated, chunked and turned into core beliefs, one model call per group
// of chunks (offline: sentence extraction); a screenshot is read by OCR (tesseract.js's own
// thread). Each step is written to the job's row and told to the admin who started it. The
// memories are written at the end, in one transaction with the job's completion and under the
// job row's lock: a failed job leaves none, and a job run again (retried after a crash, or sent
// twice) stores nothing a second time. A node that stops aborts its jobs' model calls; their
// queue entries fail and are retried, from the start, by the next worker.
import { z } from 'zod';
import { transaction } from '../../platform/db/database.js';
import { AppError, makeProblem, toProblem } from '../../platform/http/problem.js';
import { chunkText } from '../memory/index.js';
import { ExtractionError } from './training.extract.js';
import type { OcrEngine } from './training.ocr.js';
import * as repo from './training.repository.js';
import {
  beliefsFromAnswer,
  dedupBeliefs,
  groupsOf,
  keepBytes,
  normaliseText,
  offlineBeliefs,
  SYNTHESIS_CHUNK_CHARS,
  stageProgress,
  synthesisPrompt,
  type OcrLanguage,
} from './training.rules.js';
import type { TrainingService } from './training.service.js';
import { TRAINING_JOB, type TrainingDeps, type TrainingLimits } from './training.types.js';

const RETRIES = 3;
/** How long one document's extraction may take in its worker. */
const EXTRACT_TIMEOUT_MS = 5 * 60_000;

type Job = repo.JobRow & { data: Buffer | null };

/** A job's own failure (bad content, the model unavailable): recorded, not retried. */
class JobFailure extends Error {
  constructor(readonly problem: ReturnType<typeof makeProblem>) {
    super(problem.detail);
  }
}

export class TrainingJobs {
  private readonly running = new Set<AbortController>();
  private stopping = false;

  constructor(
    private readonly d: TrainingDeps,
    private readonly service: TrainingService,
    private readonly ocr: OcrEngine,
    private readonly limits: TrainingLimits,
  ) {
    d.jobs.define({
      name: TRAINING_JOB,
      schema: z.object({ jobId: z.uuid() }),
      retryLimit: RETRIES,
      retryDelay: 2,
      localConcurrency: 2,
      handler: (data, ctx) => this.run(data.jobId, ctx.retryCount >= RETRIES),
    });
  }

  /** Runs one job. `final`: the queue's last attempt (an unexpected error then fails the job). */
  async run(jobId: string, final: boolean): Promise<void> {
    const job = await repo.findJobWithData(this.d.db, jobId);
    if (!job || job.status === 'completed' || job.status === 'failed') return;
    const controller = new AbortController();
    this.running.add(controller);
    try {
      if (!job.data) throw new JobFailure(makeProblem('internal', 'The job has lost its file'));
      if (job.kind === 'ingest_file') await this.ingestFile(job, job.data, controller.signal);
      else await this.ingestScreenshot(job, job.data);
    } catch (err) {
      // Stopping: the queue entry fails and is retried by the next worker.
      if (this.stopping || controller.signal.aborted) throw err;
      const problem =
        err instanceof JobFailure
          ? err.problem
          : err instanceof AppError && err.code === 'model_unavailable'
            ? err.toProblem()
            : null;
      if (!problem && !final) throw err;
      if (!problem) this.d.log.error({ err, jobId }, 'training job failed on its last attempt');
      await this.fail(jobId, problem ?? toProblem(err));
    } finally {
      this.running.delete(controller);
    }
  }

  private async step(jobId: string, change: repo.JobChange): Promise<void> {
    const row = await repo.updateJob(this.d.db, jobId, change);
    if (row) this.service.report(row);
  }

  private async fail(jobId: string, problem: Record<string, unknown>): Promise<void> {
    await this.step(jobId, { status: 'failed', error: problem, dropData: true });
  }

  private async ingestFile(job: Job, data: Buffer, signal: AbortSignal): Promise<void> {
    await this.step(job.id, {
      status: 'running',
      stage: 'extracting',
      progress: stageProgress('extracting'),
    });
    const { text, truncated } = await this.extract(job, data);
    if (!text) throw new JobFailure(noText(`${job.file_name} holds no text`));
    const groups = groupsOf(chunkText(text, SYNTHESIS_CHUNK_CHARS, 0));
    const offline = this.d.models.offline;
    await this.step(job.id, {
      stage: 'synthesising',
      progress: stageProgress('synthesising', 0, groups.length),
      truncated,
      offline,
    });
    const npc = await this.service.character(job.npc_user_id, 'npcUserId').catch((err: unknown) => {
      throw new JobFailure(toProblem(err));
    });
    const seen = new Set<string>();
    const beliefs: { content: string; group: number }[] = [];
    for (const [i, chunks] of groups.entries()) {
      let found: string[];
      if (offline) found = offlineBeliefs(chunks.join('\n'));
      else {
        const p = synthesisPrompt(npc, { fileName: job.file_name, title: job.title }, chunks);
        const r = await this.d.models.chat({
          purpose: 'training.synthesis',
          system: p.system,
          messages: [{ role: 'user', content: p.user }],
          temperature: 0.3,
          signal,
        });
        found = beliefsFromAnswer(r.text);
      }
      for (const content of dedupBeliefs(found, seen)) beliefs.push({ content, group: i + 1 });
      await this.step(job.id, { progress: stageProgress('synthesising', i + 1, groups.length) });
    }
    if (beliefs.length === 0) throw new JobFailure(noText(`No belief could be drawn from ${job.file_name}`));
    await this.store(
      job,
      beliefs.map((b) => ({
        content: b.content,
        source: 'core_belief' as const,
        metadata: { trainingJobId: job.id, fileName: job.file_name, group: b.group },
      })),
    );
  }

  /** The file's text, normalised and cut to TRAINING_MAX_CHARS, from the extraction thread. */
  private async extract(job: Job, data: Buffer): Promise<{ text: string; truncated: boolean }> {
    const type =
      job.mime_type === 'application/pdf' ? 'pdf' : job.mime_type.startsWith('text/') ? 'text' : 'docx';
    try {
      const r = await this.d.extractor.run(
        { op: 'extract', type, data, maxChars: this.limits.maxChars },
        EXTRACT_TIMEOUT_MS,
      );
      return { text: r.text ?? '', truncated: r.truncated };
    } catch (err) {
      if (err instanceof ExtractionError)
        throw new JobFailure(noText(`${job.file_name} cannot be read: ${err.message}`));
      throw err;
    }
  }

  private async ingestScreenshot(job: Job, data: Buffer): Promise<void> {
    await this.step(job.id, {
      status: 'running',
      stage: 'extracting',
      progress: stageProgress('extracting'),
    });
    const languages = job.languages as OcrLanguage[];
    let result;
    try {
      result = await this.ocr.recognize(data, languages);
    } catch (err) {
      if (this.stopping) throw err;
      throw new JobFailure(
        noText(`${job.file_name} cannot be read: ${String((err as Error)?.message ?? err)}`),
      );
    }
    const text = normaliseText(result.text);
    if (!text) throw new JobFailure(noText(`No text was found in ${job.file_name}`));
    const { text: content, truncated } = keepBytes(text, this.limits.memoryBytes);
    if (truncated) await this.step(job.id, { truncated });
    await this.store(job, [
      {
        content,
        source: 'ingested_screenshot' as const,
        metadata: {
          trainingJobId: job.id,
          fileName: job.file_name,
          languages,
          confidence: Math.round(result.confidence * 1000) / 1000,
        },
      },
    ]);
  }

  /** The job's memories and its completion, in one transaction, once: under the row's lock, a
   * job that another run has finished meanwhile stores nothing. */
  private async store(
    job: Job,
    memories: {
      content: string;
      source: 'core_belief' | 'ingested_screenshot';
      metadata: Record<string, unknown>;
    }[],
  ): Promise<void> {
    await this.step(job.id, { stage: 'storing', progress: stageProgress('storing') });
    await transaction(this.d.db, async (uow) => {
      const { trx } = uow;
      const status = await repo.lockJobStatus(trx, job.id);
      if (status !== 'running' && status !== 'queued') return;
      // A belief (or text) the character already holds is stored once, however often a file is
      // trained: the job's memories are the ones it added.
      const stored = await this.d.memory.addMemories(
        memories.map((m) => ({ userId: job.npc_user_id, createdBy: job.created_by ?? undefined, ...m })),
        uow,
        { dedupe: true },
      );
      const row = await repo.updateJob(trx, job.id, {
        status: 'completed',
        stage: 'done',
        progress: stageProgress('done'),
        memoryIds: stored.map((m) => m.id),
        dropData: true,
      });
      if (row) uow.afterCommit(() => this.service.report(row));
    });
  }

  /** Stops this node's jobs: their model calls are aborted and their queue entries retried. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const c of this.running) c.abort();
    await this.ocr.close();
    await this.d.extractor.close();
  }
}

function noText(detail: string) {
  return makeProblem('validation_failed', detail);
}
