// Outbound webhooks for timeline events (beyond the spec, which leaves outbound delivery open).
// Administrators register endpoints; every committed timeline event that matches an enabled
// endpoint becomes a delivery, POSTed by the `webhooks.deliver` job, signed the Standard Webhooks
// way, retried with exponential backoff, each attempt logged.
//
// Why a subscriber of the timeline's flush and not a listener of the bus's `timeline.recorded`:
// the bus publishes after commit, in process memory, so a process that dies between the commit
// and the enqueue would lose the event's deliveries for good (and a sweep that reads the timeline
// afterwards cannot tell which events it already saw without a cursor on a non-monotonic commit
// order). Instead `onRecorded` subscribes to the unit of work's `timeline` flush (wired in
// startup/writes.ts) and runs inside the events' own transaction: the delivery rows and their
// pg-boss jobs commit with the event or not at all (the transactional outbox, with pg-boss's table
// as the outbox), and nothing waits on the bus.
//
// It sees every event a flush wrote at once (a sync batch is up to 100): their deliveries are one
// multi-row insert and their jobs one pg-boss `insert` (the unit's jobs, flushed together), so a
// batch that matches costs two statements whatever its size. It runs for every flush of events,
// so it must cost nothing when no endpoint matches: the enabled endpoints are cached per node and
// dropped when any node changes one (the change feed: NOTIFY on PostgreSQL, delivered on commit),
// with a short time bound in case a notice is lost. An event recorded in the milliseconds before
// a node hears of a new endpoint is not delivered to it.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { transaction, type Db, type Executor } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { enqueueLater } from '../../platform/jobs/later.js';
import { noticeLater, type ChangeFeed } from '../../platform/db/notifications.js';
import { AppError, notFound, validationFailed } from '../../platform/http/problem.js';
import { safePost, SafeFetchError, vetUrl, type SafeFetchReason } from '../../platform/http/safe-fetch.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { TimelineEvent } from '../timeline/index.js';
import * as repo from './webhooks.repository.js';
import {
  attemptOutcome,
  matches,
  newSecret,
  payload,
  signedHeaders,
  TEST_EVENT_TYPE,
  type EndpointFilter,
} from './webhooks.rules.js';
import type { CreateWebhookInput, DeliveryView, PatchWebhookInput, WebhookView } from './webhooks.schemas.js';
import { openSecret, sealSecret } from './webhooks.secrets.js';
import type { DeliveryStatus } from './webhooks.tables.js';

export const WEBHOOK_DELIVERY_JOB = 'webhooks.deliver';
const deliveryJob = z.object({ deliveryId: z.uuid() });
const CHANGES_CHANNEL = 'webhooks';
/** A refusal that a later attempt would meet again: the delivery fails at once. */
const PERMANENT: ReadonlySet<SafeFetchReason> = new Set(['invalid_url', 'blocked_scheme', 'blocked_address']);

export interface WebhooksServiceDeps {
  db: Db;
  jobs: JobQueue;
  log: Logger;
  changes: ChangeFeed;
  /** Whether an instance is an observer (Level 8): the registry's answer. */
  isObserver(id: number): Promise<boolean>;
}

export interface WebhooksOptions {
  /** Encrypts the stored signing secrets (32 bytes). */
  secretKey: Buffer;
  timeoutMs: number;
  /** Attempts in all (the first and its retries). */
  maxAttempts: number;
  /** The first retry's delay; each next one doubles, with jitter (pg-boss's backoff). */
  retryDelaySeconds: number;
  deliveryRetentionDays: number;
  /** How long a node trusts its list of enabled endpoints without a change notice. */
  endpointsCacheMs: number;
  /** Tests only: the receiver listens on loopback (config SSRF_ALLOW_LOOPBACK_FOR_TESTS). */
  allowLoopbackForTests: boolean;
  /** The clock of `webhook-timestamp` (tests inject one). */
  now?: () => number;
}

interface Endpoint extends EndpointFilter {
  id: string;
}

function toView(r: repo.WebhookRow): WebhookView {
  return {
    id: r.id,
    url: r.url,
    eventTypes: r.event_types,
    observerId: r.observer_id,
    description: r.description,
    enabled: r.enabled,
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}

type AttemptRow = Awaited<ReturnType<typeof repo.listDeliveries>>['attempts'][number];

function toDelivery(r: repo.DeliveryRow, attempts: AttemptRow[]): DeliveryView {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    eventType: r.event_type,
    status: r.status,
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      at: a.attempted_at.toISOString(),
      statusCode: a.status_code,
      error: a.error,
      durationMs: a.duration_ms,
    })),
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    deliveredAt: r.delivered_at?.toISOString() ?? null,
  };
}

export class WebhooksService {
  private cached: { at: number; list: Endpoint[] } | undefined;
  /** Bumped by every change notice: a list read before it is not kept. */
  private generation = 0;
  private readonly unlisten: () => void;
  private readonly now: () => number;

  constructor(
    private readonly d: WebhooksServiceDeps,
    private readonly o: WebhooksOptions,
  ) {
    this.now = o.now ?? Date.now;
    d.jobs.define({
      name: WEBHOOK_DELIVERY_JOB,
      schema: deliveryJob,
      retryLimit: o.maxAttempts - 1,
      retryDelay: o.retryDelaySeconds,
      // A delivery is one POST of at most timeoutMs: a node killed mid-delivery must not hold
      // the job for pg-boss's default 15 minutes before another node retries it.
      expireInSeconds: Math.ceil(o.timeoutMs / 1000) + 30,
      // Up to 40 POSTs in flight a node: a busy observer's endpoint gets an event for every
      // ingest (one worker at a time each fell behind at 60 events a second).
      localConcurrency: 4,
      batchSize: 10,
      batchSideBySide: true,
      handler: (data, ctx) => this.deliver(data.deliveryId, ctx.retryCount),
    });
    this.unlisten = d.changes.listen(CHANGES_CHANNEL, { onNotice: this.forget, onReset: this.forget });
  }

  close() {
    this.unlisten();
  }

  // ---- endpoints (admin) --------------------------------------------------------------------

  async create(input: CreateWebhookInput, actorId: number): Promise<WebhookView & { secret: string }> {
    await this.checkTargets(input);
    const id = randomUUID();
    const secret = newSecret();
    const row = await this.changing((trx) =>
      repo.insertWebhook(trx, {
        id,
        url: input.url,
        eventTypes: [...new Set(input.eventTypes)],
        observerId: input.observerId ?? null,
        description: input.description ?? '',
        enabled: input.enabled ?? true,
        secretCiphertext: sealSecret(this.o.secretKey, secret, id),
        createdByUserId: actorId,
      }),
    );
    return { ...toView(row), secret };
  }

  async list(limit: number, offset: number) {
    const { rows, total } = await repo.listWebhooks(this.d.db, limit, offset);
    return { webhooks: rows.map(toView), total, limit, offset };
  }

  async get(id: string): Promise<WebhookView> {
    const row = await repo.findWebhook(this.d.db, id);
    if (!row) throw notFound('webhook');
    return toView(row);
  }

  async update(id: string, patch: PatchWebhookInput): Promise<WebhookView> {
    await this.get(id);
    await this.checkTargets(patch);
    const row = await this.changing((trx) =>
      repo.updateWebhook(trx, id, {
        ...(patch.url !== undefined ? { url: patch.url } : {}),
        ...(patch.eventTypes !== undefined ? { event_types: [...new Set(patch.eventTypes)] } : {}),
        ...(patch.observerId !== undefined ? { observer_id: patch.observerId } : {}),
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
      }),
    );
    if (!row) throw notFound('webhook');
    return toView(row);
  }

  async remove(id: string): Promise<void> {
    const r = await this.changing((trx) => repo.deleteWebhook(trx, id));
    if (Number(r.numDeletedRows) === 0) throw notFound('webhook');
  }

  /** A new secret, shown once; the old one signs nothing from now on (pending retries included). */
  async rotateSecret(id: string): Promise<WebhookView & { secret: string }> {
    const secret = newSecret();
    const row = await repo.updateWebhook(this.d.db, id, {
      secret_ciphertext: sealSecret(this.o.secretKey, secret, id),
    });
    if (!row) throw notFound('webhook');
    return { ...toView(row), secret };
  }

  async deliveries(id: string, f: { status?: DeliveryStatus | undefined; limit: number; offset: number }) {
    await this.get(id);
    const { deliveries, attempts, total } = await repo.listDeliveries(this.d.db, { webhookId: id, ...f });
    return {
      deliveries: deliveries.map((r) =>
        toDelivery(
          r,
          attempts.filter((a) => a.delivery_id === r.id),
        ),
      ),
      total,
      limit: f.limit,
      offset: f.offset,
    };
  }

  /** A `webhook.test` delivery, queued like any other (whatever the endpoint's filters). */
  async sendTest(id: string, actorId: number): Promise<DeliveryView> {
    const webhook = await this.get(id);
    if (!webhook.enabled) throw new AppError('conflict', 'The webhook is disabled; enable it first');
    const at = new Date(this.now()).toISOString();
    const body = payload(TEST_EVENT_TYPE, at, { webhookId: id, requestedByUserId: actorId });
    const [row] = await transaction(this.d.db, (uow) =>
      this.enqueue(uow, [
        { id: randomUUID(), webhookId: id, eventId: null, eventType: TEST_EVENT_TYPE, body },
      ]),
    );
    return toDelivery(row!, []);
  }

  /** The maintenance sweep: finished deliveries past their retention. */
  sweep(): Promise<number> {
    return repo.sweepDeliveries(this.d.db, this.o.deliveryRetentionDays);
  }

  // ---- the timeline's subscriber and the delivery job ------------------------------------------

  /** The `timeline` flush's subscriber (startup/writes.ts), in the events' transaction: a delivery and its
   * job for each enabled endpoint each event matches, for the whole flush at once: the deliveries
   * in one insert, their jobs in one more (a batch of 100 ingests costs two statements, not two
   * per delivery), in event order and, for each event, in the endpoints' order. */
  async onRecorded(uow: UnitOfWork, events: readonly TimelineEvent[]): Promise<void> {
    const endpoints = await this.endpoints(uow.trx);
    if (endpoints.length === 0) return;
    const rows: Parameters<typeof repo.insertDeliveries>[1] = [];
    for (const event of events) {
      const targets = endpoints.filter((e) => matches(e, event));
      if (targets.length === 0) continue;
      const body = payload(event.eventType, event.timelineAt, event);
      for (const e of targets)
        rows.push({ id: randomUUID(), webhookId: e.id, eventId: event.id, eventType: event.eventType, body });
    }
    if (rows.length > 0) void this.enqueue(uow, rows);
  }

  /** The deliveries, sent in the unit (not waited for), and their jobs, added to it: both go out
   * together at its flush (the jobs name the deliveries by the ids made here, not by the insert's
   * answer). */
  private enqueue(uow: UnitOfWork, rows: Parameters<typeof repo.insertDeliveries>[1]) {
    const stored = uow.send(repo.insertDeliveries(uow.trx, rows));
    for (const r of rows) void enqueueLater(uow, WEBHOOK_DELIVERY_JOB, { deliveryId: r.id });
    return stored;
  }

  /** One attempt of one delivery (the job; `retryCount` is pg-boss's: 0 at the first attempt).
   * Throws to have pg-boss retry it after its backoff. */
  async deliver(deliveryId: string, retryCount: number): Promise<void> {
    const d = await repo.deliveryToSend(this.d.db, deliveryId);
    // Deleted with its endpoint, or finished already (a job run twice).
    if (!d || d.status !== 'pending') return;
    if (!d.enabled) {
      await repo.failWithoutAttempt(this.d.db, d.id, 'the webhook was disabled before delivery');
      return;
    }
    let secret: string;
    try {
      secret = openSecret(this.o.secretKey, d.secret_ciphertext, d.webhook_id);
    } catch {
      this.d.log.error({ webhookId: d.webhook_id }, 'a webhook secret does not decrypt (key changed?)');
      await repo.failWithoutAttempt(this.d.db, d.id, 'the signing secret cannot be read; rotate it');
      return;
    }
    const timestamp = Math.floor(this.now() / 1000);
    const started = performance.now();
    let result: { status: number; body: string } | { error: string; retryable: boolean };
    try {
      result = await safePost(d.url, {
        headers: signedHeaders(secret, d.id, timestamp, d.body),
        body: d.body,
        timeoutMs: this.o.timeoutMs,
        keepBytes: 200,
        allowLoopbackFirstHopForTests: this.o.allowLoopbackForTests,
      });
    } catch (err) {
      if (!(err instanceof SafeFetchError)) throw err;
      result = { error: `${err.reason}: ${err.message}`, retryable: !PERMANENT.has(err.reason) };
    }
    const durationMs = Math.round(performance.now() - started);
    const outcome = attemptOutcome(result, retryCount >= this.o.maxAttempts - 1);
    await transaction(this.d.db, (uow) =>
      repo.recordAttempt(uow.trx, d.id, {
        status: outcome === 'retry' ? 'pending' : outcome,
        statusCode: 'status' in result ? result.status : null,
        error:
          'error' in result
            ? result.error
            : outcome === 'succeeded'
              ? null
              : `answered ${result.status}${result.body ? `: ${result.body}` : ''}`,
        durationMs,
      }),
    );
    if (outcome === 'retry') throw new Error(`webhook delivery ${d.id}: attempt failed, to be retried`);
  }

  // ---- internals ----------------------------------------------------------------------------

  private readonly forget = () => {
    this.generation++;
    this.cached = undefined;
  };

  /** The enabled endpoints, cached; read with the caller's executor (inside the recording
   * transaction, which on the embedded database holds its only connection). */
  private async endpoints(executor: Executor): Promise<Endpoint[]> {
    const now = Date.now();
    if (this.cached && now - this.cached.at < this.o.endpointsCacheMs) return this.cached.list;
    const generation = this.generation;
    const list = (await repo.enabledEndpoints(executor)).map((r) => ({
      id: r.id,
      eventTypes: r.event_types,
      observerId: r.observer_id,
    }));
    if (generation === this.generation) this.cached = { at: now, list };
    return list;
  }

  /** A change of the endpoints, announced to every node (on commit) and forgotten here. */
  private changing<T>(fn: (trx: Executor) => Promise<T>): Promise<T> {
    return transaction(this.d.db, async (uow) => {
      const out = await fn(uow.trx);
      void noticeLater(uow, CHANGES_CHANNEL, '');
      uow.afterCommit(this.forget);
      return out;
    });
  }

  /** The URL passes the SSRF guard (it is checked again at every delivery) and the observer is
   * one. */
  private async checkTargets(input: { url?: string | undefined; observerId?: number | null | undefined }) {
    if (input.url !== undefined) {
      try {
        await vetUrl(input.url, {
          timeoutMs: this.o.timeoutMs,
          allowLoopbackFirstHopForTests: this.o.allowLoopbackForTests,
        });
      } catch (err) {
        if (!(err instanceof SafeFetchError)) throw err;
        throw validationFailed([{ path: 'body.url', message: err.message }], 'The URL may not be called');
      }
    }
    if (input.observerId != null && !(await this.d.isObserver(input.observerId)))
      throw validationFailed([{ path: 'body.observerId', message: `no observer ${input.observerId}` }]);
  }
}
