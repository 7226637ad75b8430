// The one door to the models (ARCHITECTURE.md convention 7): every call gets a timeout, retries
// with exponential backoff on 429, 408, 5xx and network failures (honouring Retry-After), a
// process-wide concurrency limit, and a row in `model_calls` (purpose, model, tokens in/out,
// latency, attempts, outcome). A call that still fails raises 503 `model_unavailable`.
// Never call it inside an open transaction: read, call, write.
import { AsyncLocalStorage } from 'node:async_hooks';
import { sql, type Insertable } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { AppError } from '../http/problem.js';
import { OfflineProvider } from './offline.js';
import { classifyError, OpenAICompatibleModels } from './openai-compatible.js';
import type {
  ChatRequest,
  ChatResult,
  EmbedResult,
  ModelProvider,
  Usage,
  VisionRequest,
  VisionResult,
} from './provider.js';
import type { ModelCallKind } from './models.tables.js';
import './models.tables.js';
import { recordUsage, traced } from '../tracing.js';

export interface GatewayOptions {
  timeoutMs: number;
  maxRetries: number;
  concurrency: number;
  /** First backoff delay; doubles each retry, with jitter. */
  retryBaseMs: number;
}

/** The model time of one unit of work (a chat turn), for telling the service's own latency from
 * the model's: every call the gateway makes inside `withModelTime` (in any promise started there)
 * adds its duration, as recorded in `model_calls` (waits for a free slot and retries included). */
const modelTime = new AsyncLocalStorage<{ ms: number }>();

export function withModelTime<T>(fn: (account: { readonly ms: number }) => T): T {
  const account = { ms: 0 };
  return modelTime.run(account, () => fn(account));
}

/** A counting semaphore: at most `limit` model calls in flight from this process. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}
  async acquire(): Promise<void> {
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    await new Promise<void>((ok) => this.waiting.push(ok));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
  get inFlight() {
    return this.active;
  }
  get queued() {
    return this.waiting.length;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MAX_RETRY_AFTER_MS = 30_000;
/** How long a call's record may wait to share its INSERT with later calls. */
const RECORD_DELAY_MS = 250;

/** The gateway over the configured provider, with the configured timeouts, retries and
 * concurrency. */
export function createModelGateway(config: Config, db: Db, log: Logger): ModelGateway {
  return new ModelGateway(createModelProvider(config), db, log, {
    timeoutMs: config.models.timeoutMs,
    maxRetries: config.models.maxRetries,
    concurrency: config.models.concurrency,
    retryBaseMs: config.models.retryBaseMs,
  });
}

export function createModelProvider(config: Config): ModelProvider {
  const m = config.models;
  if (!m.baseUrl) return new OfflineProvider(m.embeddingDimensions, m.offlineEmbeddingModel);
  return new OpenAICompatibleModels({
    baseUrl: m.baseUrl,
    apiKey: m.apiKey,
    chatModel: m.chatModel,
    embeddingModel: m.embeddingModel,
    visionModel: m.visionModel,
    embeddingDimensions: m.embeddingDimensions,
  });
}

export class ModelGateway {
  private readonly limiter: Limiter;

  constructor(
    readonly provider: ModelProvider,
    private readonly db: Db,
    private readonly log: Logger,
    private readonly opts: GatewayOptions,
  ) {
    this.limiter = new Limiter(opts.concurrency);
  }

  get offline(): boolean {
    return this.provider.offline;
  }
  /** Embeddings are computed in this process (the offline embedder): no network, nothing to wait
   * for or retry, so callers may embed where they write instead of in a background job. */
  get embedsLocally(): boolean {
    return this.provider.offline;
  }
  get embeddingModel(): string {
    return this.provider.embeddingModel;
  }
  /** Known ahead of a call when offline or when EMBEDDING_DIMENSIONS is set; else what the model returns. */
  get embeddingDimensions(): number | undefined {
    return this.provider.embeddingDimensions;
  }

  chat(req: ChatRequest): Promise<ChatResult> {
    return this.run(
      'chat',
      req.purpose,
      this.provider.chatModel,
      (s) => this.provider.chat(req, s),
      (r) => r.usage,
      req.signal,
    );
  }

  /** Streams text through onDelta. Retries only happen before the first delta was delivered. */
  streamChat(req: ChatRequest, onDelta: (delta: string) => void): Promise<ChatResult> {
    return this.run(
      'stream',
      req.purpose,
      this.provider.chatModel,
      (s) => this.provider.streamChat(req, s, onDelta),
      (r) => r.usage,
      req.signal,
    );
  }

  /** One batched embedding request for all texts. */
  embed(texts: string[], purpose: string, signal?: AbortSignal): Promise<EmbedResult> {
    if (texts.length === 0)
      return Promise.resolve({
        embeddings: [],
        provider: this.provider.name,
        model: this.provider.embeddingModel,
        dimensions: this.provider.embeddingDimensions ?? 0,
        usage: { inputTokens: 0, outputTokens: 0 },
        offline: this.provider.offline,
      });
    return this.run(
      'embed',
      purpose,
      this.provider.embeddingModel,
      (s) => this.provider.embed(texts, s),
      (r) => r.usage,
      signal,
    );
  }

  describeImage(req: VisionRequest): Promise<VisionResult> {
    return this.run(
      'vision',
      req.purpose,
      this.provider.visionModel,
      (s) => this.provider.describeImage(req, s),
      (r) => r.usage,
      req.signal,
    );
  }

  /** One model call with its retries: a span of its own (its tokens as attributes) when traced. */
  private run<T>(
    kind: ModelCallKind,
    purpose: string,
    model: string,
    attempt: (signal: AbortSignal) => Promise<T>,
    usageOf: (r: T) => Usage,
    callerSignal: AbortSignal | undefined,
  ): Promise<T> {
    const attributes = {
      'gen_ai.operation.name': kind,
      'gen_ai.request.model': model,
      'model.purpose': purpose,
    };
    return traced(`gen_ai.${kind}`, attributes, () =>
      this.attempts(kind, purpose, model, attempt, usageOf, callerSignal),
    );
  }

  private async attempts<T>(
    kind: ModelCallKind,
    purpose: string,
    model: string,
    attempt: (signal: AbortSignal) => Promise<T>,
    usageOf: (r: T) => Usage,
    callerSignal: AbortSignal | undefined,
  ): Promise<T> {
    const started = performance.now();
    const account = modelTime.getStore();
    const charge = () => {
      if (account) account.ms += performance.now() - started;
    };
    for (let attempts = 1; ; attempts++) {
      await this.limiter.acquire();
      const timeout = AbortSignal.timeout(this.opts.timeoutMs);
      const signal = callerSignal ? AbortSignal.any([timeout, callerSignal]) : timeout;
      let failure;
      try {
        const result = await attempt(signal);
        this.limiter.release();
        charge();
        const usage = usageOf(result);
        recordUsage(usage.inputTokens, usage.outputTokens);
        this.record({ kind, purpose, model, usage, started, attempts, error: null });
        return result;
      } catch (err) {
        this.limiter.release();
        failure =
          timeout.aborted && !callerSignal?.aborted
            ? classifyError(Object.assign(new Error('timeout'), { name: 'TimeoutError' }))
            : classifyError(err);
      }
      const giveUp = !failure.retryable || attempts > this.opts.maxRetries || callerSignal?.aborted === true;
      if (giveUp) {
        charge();
        this.record({
          kind,
          purpose,
          model,
          usage: { inputTokens: 0, outputTokens: 0 },
          started,
          attempts,
          error: failure.message,
        });
        this.log.warn(
          { kind, purpose, model, attempts, status: failure.status, err: failure.message },
          'model call failed',
        );
        throw new AppError(
          'model_unavailable',
          `The model provider failed after ${attempts} attempt${attempts > 1 ? 's' : ''}`,
          {
            attempts,
            ...(failure.status ? { providerStatus: failure.status } : {}),
          },
        );
      }
      const backoff = this.opts.retryBaseMs * 2 ** (attempts - 1) * (0.75 + Math.random() * 0.5);
      const delay =
        failure.retryAfterMs !== undefined
          ? Math.min(Math.max(failure.retryAfterMs, backoff), MAX_RETRY_AFTER_MS)
          : backoff;
      this.log.debug(
        { kind, purpose, attempts, delay, status: failure.status },
        'model call failed; retrying',
      );
      await sleep(delay);
    }
  }

  /** Records a call without holding up its caller: rows are written behind, many per INSERT, by
   * one flush at a time, RECORD_DELAY_MS after the first unwritten call (a chat turn's two calls
   * share an INSERT with the calls of other turns, not one each). Accounting must never turn a
   * good answer into a failure, so a failed write is logged and dropped; calls still unwritten
   * when the process dies uncleanly are lost with it (shutdown flushes). */
  private record(r: {
    kind: ModelCallKind;
    purpose: string;
    model: string;
    usage: Usage;
    started: number;
    attempts: number;
    error: string | null;
  }): void {
    this.unrecorded.push({
      kind: r.kind,
      purpose: r.purpose.slice(0, 100),
      provider: this.provider.name,
      model: r.model,
      tokens_in: r.usage.inputTokens,
      tokens_out: r.usage.outputTokens,
      latency_ms: Math.round(performance.now() - r.started),
      attempts: r.attempts,
      outcome: r.error === null ? 'ok' : 'error',
      error: r.error?.slice(0, 500) ?? null,
    });
    if (!this.flushing && !this.recordTimer)
      // Unref'd: a pending record never keeps the process alive (shutdown flushes).
      this.recordTimer = setTimeout(() => this.startWriting(), RECORD_DELAY_MS).unref();
  }

  private unrecorded: Insertable<Database['model_calls']>[] = [];
  private flushing: Promise<void> | undefined;
  private recordTimer: NodeJS.Timeout | undefined;

  private startWriting(): void {
    clearTimeout(this.recordTimer);
    this.recordTimer = undefined;
    this.flushing ??= this.writeRecords();
  }

  private async writeRecords(): Promise<void> {
    try {
      while (this.unrecorded.length > 0) {
        const rows = this.unrecorded.splice(0, 500);
        try {
          await this.db.insertInto('model_calls').values(rows).execute();
        } catch (err) {
          this.log.warn({ err, calls: rows.length }, 'could not record model calls');
        }
      }
    } finally {
      this.flushing = undefined;
    }
  }

  /** Waits until every call made so far is in `model_calls` (readers of the table, shutdown). */
  async flush(): Promise<void> {
    if (this.recordTimer) this.startWriting();
    while (this.flushing) await this.flushing;
  }

  /** For /api/admin/health: provider, models, offline flag, recent outcomes and errors. */
  async status(): Promise<Record<string, unknown>> {
    await this.flush();
    const since = sql<Date>`now() - interval '15 minutes'`;
    const [outcomes, lastErrors] = await Promise.all([
      this.db
        .selectFrom('model_calls')
        .select([
          'outcome',
          (eb) => eb.fn.countAll<number>().as('n'),
          (eb) => eb.fn.avg<number>('latency_ms').as('avg'),
        ])
        .where('created_at', '>', since)
        .groupBy('outcome')
        .execute(),
      this.db
        .selectFrom('model_calls')
        .select(['kind', 'purpose', 'model', 'error', 'attempts', 'created_at'])
        .where('outcome', '=', 'error')
        .orderBy('id', 'desc')
        .limit(5)
        .execute(),
    ]);
    const count = (o: string) => Number(outcomes.find((r) => r.outcome === o)?.n ?? 0);
    return {
      provider: this.provider.name,
      offline: this.provider.offline,
      chatModel: this.provider.chatModel,
      embeddingModel: this.provider.embeddingModel,
      visionModel: this.provider.visionModel,
      embeddingDimensions: this.provider.embeddingDimensions ?? null,
      limits: {
        timeoutMs: this.opts.timeoutMs,
        maxRetries: this.opts.maxRetries,
        concurrency: this.opts.concurrency,
      },
      inFlight: this.limiter.inFlight,
      queued: this.limiter.queued,
      recent: {
        windowMinutes: 15,
        ok: count('ok'),
        error: count('error'),
        avgLatencyMs: Math.round(Number(outcomes.find((r) => r.outcome === 'ok')?.avg ?? 0)),
      },
      lastErrors: lastErrors.map((e) => ({ ...e, at: e.created_at.toISOString(), created_at: undefined })),
    };
  }

  /** For the admin statistics: calls in the last `hours` by kind and outcome, with their tokens
   * and latency (every call made so far is written first). */
  async usage(hours: number) {
    await this.flush();
    const rows = await this.db
      .selectFrom('model_calls')
      .where('created_at', '>', sql<Date>`now() - make_interval(hours => ${hours})`)
      .select([
        'kind',
        'outcome',
        (eb) => eb.fn.countAll<number>().as('calls'),
        sql<number>`coalesce(sum(tokens_in), 0)`.as('tokensIn'),
        sql<number>`coalesce(sum(tokens_out), 0)`.as('tokensOut'),
        sql<number>`coalesce(round(avg(latency_ms)), 0)`.as('avgLatencyMs'),
        sql<number>`coalesce(percentile_disc(0.95) within group (order by latency_ms), 0)`.as('p95LatencyMs'),
      ])
      .groupBy(['kind', 'outcome'])
      .orderBy('kind')
      .execute();
    return rows.map((m) => ({
      kind: m.kind,
      outcome: m.outcome,
      calls: Number(m.calls),
      tokensIn: Number(m.tokensIn),
      tokensOut: Number(m.tokensOut),
      avgLatencyMs: Number(m.avgLatencyMs),
      p95LatencyMs: Number(m.p95LatencyMs),
    }));
  }
}
