// Email verification and password reset (spec "Authentication endpoints"; the API contract
// "Identity and tokens"). Tokens are random, stored as SHA-256 hashes, single-use and expiring.
//
// Mail goes out from a job, never from the request: the request only enqueues (by address for a
// reset), and the worker looks the account up. So request-password-reset does the same work and
// takes the same time whether or not the account exists (no enumeration), a slow SMTP server
// never holds a request, and a failed send is retried. The raw token exists only in the worker
// and the mail; the job carries no secret.
import { z } from 'zod';
import type { Logger } from 'pino';
import { type Db, type Executor, transaction } from '../../platform/db/database.js';
import { validationFailed } from '../../platform/http/problem.js';
import type { CounterStore } from '../../platform/http/rate-limit.js';
import type { JobQueue } from '../../platform/jobs/queue.js';
import type { Mailer, MailMessage } from '../../platform/mail/mailer.js';
import { randomToken, sha256 } from '../../platform/security/secrets.js';
import type { UserRow, UsersService } from '../users/index.js';
import type { AuthService } from './auth.service.js';
import * as repo from './account-email.repository.js';
import type { AccountTokenPurpose } from './oauth.tables.js';

export const ACCOUNT_EMAIL_JOB = 'auth.account-email';

const PURPOSES = ['verify_email', 'reset_password'] as const satisfies readonly AccountTokenPurpose[];
const jobSchema = z.union([
  z.object({ purpose: z.enum(PURPOSES), userId: z.number().int().positive() }).strict(),
  z.object({ purpose: z.enum(PURPOSES), email: z.string().min(1).max(254) }).strict(),
]);
type AccountEmailJob = z.infer<typeof jobSchema>;

export interface AccountEmailOptions {
  appUrl: string;
  verifyTtlSeconds: number;
  resetTtlSeconds: number;
  /** Mails of one purpose per address per hour; more are dropped silently (no mail bombing,
   * and no answer that would differ between known and unknown addresses). */
  mailsPerHour: number;
}

const INVALID_TOKEN = 'The token is not valid, has expired or was already used';

function hours(seconds: number): string {
  const h = seconds / 3600;
  return h >= 1 && Number.isInteger(h)
    ? `${h} hour${h === 1 ? '' : 's'}`
    : `${Math.round(seconds / 60)} minutes`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Queues the verification mail of a new account (registration calls it before it answers; the
 * job is this module's). A failure is logged, never fails the registration. */
export async function enqueueVerification(jobs: JobQueue, db: Executor, log: Logger, user: UserRow) {
  if (!user.email || user.email_verified) return;
  try {
    await jobs.enqueue(db, ACCOUNT_EMAIL_JOB, { purpose: 'verify_email', userId: user.id });
  } catch (err) {
    log.error({ err, userId: user.id }, 'could not enqueue the verification mail');
  }
}

export class AccountEmailService {
  constructor(
    private readonly db: Db,
    private readonly users: UsersService,
    private readonly auth: AuthService,
    private readonly jobs: JobQueue,
    private readonly mailer: Mailer,
    private readonly counters: CounterStore,
    private readonly log: Logger,
    private readonly opts: AccountEmailOptions,
  ) {
    jobs.define({
      name: ACCOUNT_EMAIL_JOB,
      schema: jobSchema,
      retryLimit: 5,
      retryDelay: 5,
      handler: (data) => this.deliver(data),
    });
  }

  /** Registration sends the verification mail (issue 6). A failure to enqueue must not fail a
   * registration that already happened: it is logged, and the user can ask again. */
  async sendVerification(user: UserRow): Promise<void> {
    await enqueueVerification(this.jobs, this.db, this.log, user);
  }

  /** POST /api/auth/resend-verification: same shape as a reset request, same silence. */
  async requestVerification(email: string): Promise<void> {
    await this.jobs.enqueue(this.db, ACCOUNT_EMAIL_JOB, {
      purpose: 'verify_email',
      email: email.trim().toLowerCase(),
    });
  }

  /** POST /api/auth/request-password-reset: always accepted, whether or not the account exists. */
  async requestPasswordReset(email: string): Promise<void> {
    await this.jobs.enqueue(this.db, ACCOUNT_EMAIL_JOB, {
      purpose: 'reset_password',
      email: email.trim().toLowerCase(),
    });
  }

  /** POST /api/auth/verify-email. */
  async verifyEmail(token: string): Promise<{ verified: true }> {
    const ok = await transaction(this.db, async ({ trx }) => {
      const row = await repo.consumeToken(trx, 'verify_email', sha256(token));
      if (!row) return false;
      // The account's address changed since the mail went out: that mail proves nothing now.
      return this.users.markEmailVerified(row.user_id, row.email, trx);
    });
    if (!ok) throw validationFailed([{ path: 'body.token', message: INVALID_TOKEN }], INVALID_TOKEN);
    return { verified: true };
  }

  /** POST /api/auth/reset-password: new password, every session signed out, older links spent. */
  async resetPassword(token: string, password: string): Promise<{ reset: true }> {
    const ok = await transaction(this.db, async (uow) => {
      const { trx } = uow;
      const row = await repo.consumeToken(trx, 'reset_password', sha256(token));
      if (!row) return false;
      const user = await this.users.get(row.user_id, trx);
      if (user.email?.toLowerCase() !== row.email.toLowerCase()) return false;
      await this.users.setPassword(user.id, password, trx);
      await repo.spendAllTokens(trx, user.id, 'reset_password');
      // Following the link proved the mailbox is theirs.
      await this.users.markEmailVerified(user.id, row.email, trx);
      // the API contract: reset-password revokes every refresh token of the user.
      await this.auth.revokeAllSessions(user.id, uow);
      return true;
    });
    if (!ok) throw validationFailed([{ path: 'body.token', message: INVALID_TOKEN }], INVALID_TOKEN);
    return { reset: true };
  }

  /** The job: find the account, make a token, send the mail. Unknown addresses end here. */
  private async deliver(job: AccountEmailJob): Promise<void> {
    const user =
      'userId' in job
        ? await this.users.get(job.userId).catch(() => undefined)
        : await this.users.findByEmail(job.email);
    if (!user?.email) return;
    if (job.purpose === 'verify_email' && user.email_verified) return;
    const sent = await this.counters.hit(`account-mail:${job.purpose}:${user.email.toLowerCase()}`, 3600_000);
    if (sent.count > this.opts.mailsPerHour) {
      this.log.warn(
        { userId: user.id, purpose: job.purpose },
        'account mail limit reached; this one is not sent',
      );
      return;
    }
    const token = randomToken(32);
    const ttl = job.purpose === 'verify_email' ? this.opts.verifyTtlSeconds : this.opts.resetTtlSeconds;
    await repo.deleteStaleTokens(this.db);
    await repo.insertToken(this.db, {
      purpose: job.purpose,
      tokenHash: sha256(token),
      userId: user.id,
      email: user.email,
      expiresAt: new Date(Date.now() + ttl * 1000),
    });
    await this.mailer.send(this.compose(job.purpose, user, token, ttl));
  }

  /** contract: "Operations": mail links are APP_URL/verify-email?token= and
   * APP_URL/reset-password?token=. */
  private compose(purpose: AccountTokenPurpose, user: UserRow, token: string, ttl: number): MailMessage {
    const to = user.email!;
    const greeting = `Hello ${user.name},`;
    if (purpose === 'verify_email') {
      const link = `${this.opts.appUrl}/verify-email?token=${encodeURIComponent(token)}`;
      return {
        to,
        subject: 'Confirm your email address',
        text: `${greeting}\n\nPlease confirm your email address by opening this link:\n\n${link}\n\nThe link works once and expires in ${hours(ttl)}. If you did not create an account, ignore this mail.\n`,
        html: `<p>${escapeHtml(greeting)}</p><p>Please confirm your email address: <a href="${escapeHtml(link)}">confirm</a>.</p><p>The link works once and expires in ${hours(ttl)}. If you did not create an account, ignore this mail.</p>`,
      };
    }
    const link = `${this.opts.appUrl}/reset-password?token=${encodeURIComponent(token)}`;
    return {
      to,
      subject: 'Reset your password',
      text: `${greeting}\n\nSomeone (we hope you) asked to reset the password of your account. To choose a new one, open this link:\n\n${link}\n\nThe link works once and expires in ${hours(ttl)}. Resetting signs out every session. If you did not ask, ignore this mail: your password stays as it is.\n`,
      html: `<p>${escapeHtml(greeting)}</p><p>Someone (we hope you) asked to reset the password of your account: <a href="${escapeHtml(link)}">choose a new password</a>.</p><p>The link works once and expires in ${hours(ttl)}. Resetting signs out every session. If you did not ask, ignore this mail.</p>`,
    };
  }
}
