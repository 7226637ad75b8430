// The issue tracker of collectArtifacts (spec: "issue created in a code-hosting tracker if
// configured"): built only when ISSUE_TRACKER_TOKEN and ISSUE_TRACKER_REPO are set. The entry
// writes the issue's row and its `workflows.issue` job in its own transaction (the transactional
// outbox, as the webhooks' deliveries do), so an issue is filed exactly when the state's entry
// commits; the job calls the tracker, retried with backoff on a 5xx, a rate limit or no answer,
// and records the issue's number and URL on the row and on each artifact it lists. A refusal
// another attempt would meet again (bad credentials, no such repository) fails the issue at once.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { together, transaction, type Db } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import { enqueueLater } from '../../platform/jobs/later.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import { gitHubIssues, type IssueTracker } from '../../platform/tracker/github.js';
import * as repo from './workflows.issues.repository.js';
import {
  issueAttemptResult,
  issueText,
  type IssueLinks,
  type IssueSubject,
} from './workflows.issues.rules.js';

export const ISSUE_JOB = 'workflows.issue';

export interface IssueTrackerConfig {
  token: string;
  repo: string;
  apiUrl: string;
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** The first retry's delay; each next one doubles (pg-boss's backoff). */
  retryDelaySeconds: number;
}

export class WorkflowIssues {
  /** The client: the token lives in its closure, on no object here, so logging this one shows
   * none (nor does it keep the configuration it was given). */
  private readonly tracker: IssueTracker;
  private readonly maxAttempts: number;
  private readonly links: IssueLinks;

  constructor(
    private readonly d: { db: Db; jobs: JobQueue; log: Logger },
    config: IssueTrackerConfig,
    links: IssueLinks,
  ) {
    this.tracker = gitHubIssues(config);
    this.maxAttempts = config.maxAttempts;
    this.links = { publicUrl: links.publicUrl, appUrl: links.appUrl };
    d.jobs.define({
      name: ISSUE_JOB,
      schema: z.object({ issueId: z.uuid() }),
      retryLimit: config.maxAttempts - 1,
      retryDelay: config.retryDelaySeconds,
      handler: (data, ctx) => this.create(data.issueId, ctx.retryCount),
    });
  }

  /** In the collecting unit of work: the issue's row, sent, and its job, added to the unit (both
   * go out with the unit's next statements). Answers at once with the issue's id (made here, so
   * the collection's event can name it) and the row's insert, not yet answered. */
  file(uow: UnitOfWork, s: IssueSubject): { id: string; written: Promise<unknown> } {
    const id = randomUUID();
    const { title, body } = issueText(s, this.links);
    const written = uow.send(
      repo.insertIssue(uow.trx, {
        id,
        instanceId: s.instanceId,
        state: s.state,
        stateVisit: s.stateVisit,
        artifactIds: s.artifacts.map((a) => a.id),
        title,
        body,
      }),
    );
    void enqueueLater(uow, ISSUE_JOB, { issueId: id });
    return { id, written };
  }

  /** One attempt (the job; `retryCount` is pg-boss's: 0 at the first). Throws to be retried.
   *
   * Idempotent as far as the tracker allows: an issue already created (or failed) is never sent
   * again. The window that remains: the tracker created the issue but its answer was lost (a
   * timeout, the process dying before the row is written), and the retry files a second one.
   * GitHub's issues API takes no idempotency key, so that window cannot be closed from here. */
  async create(id: string, retryCount: number): Promise<void> {
    const issue = await repo.findIssue(this.d.db, id);
    // Deleted with its instance, or created or failed already (a job run twice).
    if (!issue || issue.status !== 'pending') return;
    const outcome = await this.tracker.create({ title: issue.title, body: issue.body });
    const result = issueAttemptResult(outcome, retryCount >= this.maxAttempts - 1);
    const log = this.d.log.child({ issueId: id, instanceId: issue.instance_id, repo: this.tracker.repo });
    if (outcome.kind === 'created') {
      const ref = { number: outcome.number, url: outcome.url };
      await transaction(this.d.db, ({ trx }) =>
        together([
          repo.recordAttempt(trx, id, { status: 'created', issue: ref, error: null }),
          repo.setArtifactsIssue(trx, issue.artifact_ids, ref),
        ]),
      );
      log.info({ number: ref.number, url: ref.url }, 'workflow issue created');
      return;
    }
    await repo.recordAttempt(this.d.db, id, {
      status: result === 'retry' ? 'pending' : 'failed',
      issue: null,
      error: outcome.error,
    });
    if (result === 'retry') throw new Error(`workflow issue ${id}: ${outcome.error}; to be retried`);
    log.warn(
      { status: outcome.status, error: outcome.error, attempts: retryCount + 1 },
      'workflow issue failed',
    );
  }
}
