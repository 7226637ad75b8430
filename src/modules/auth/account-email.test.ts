// Email verification and password reset, with mail delivered to a real SMTP server on loopback
// and read from what arrived: each happy path, expiry, reuse and tampering; request-password-reset
// always 202 with no enumeration; the offline outbox when no SMTP server is configured.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../platform/security/secrets.js';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';
import { startSmtpServer, type ReceivedMail, type TestSmtpServer } from '../../../test/smtp-server.js';
import { expectProblem } from '../../../test/expect-problem.js';

/** The answer to a token that cannot be used (expired, spent, or for another address). */
function expectInvalidToken(r: Parameters<typeof expectProblem>[0]) {
  const problem = expectProblem(r, 400, 'validation_failed');
  expect(problem.errors).toEqual([
    { path: 'body.token', message: 'The token is not valid, has expired or was already used' },
  ]);
}

const APP = 'http://app.test';
const PASSWORD = 'correct horse battery';

const newEmail = () => `mail-${randomBytes(4).toString('hex')}@example.test`;

function tokenIn(mail: ReceivedMail | undefined, page: 'verify-email' | 'reset-password'): string {
  const m = new RegExp(`${APP.replace(/[.]/g, '\\.')}/${page}\\?token=([\\w-]+)`).exec(mail?.body ?? '');
  if (!m) throw new Error(`no ${page} link in the mail`);
  return m[1]!;
}

/** Flips one character: a token that looks right and is not. */
const tamper = (token: string) => token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A');

describe('with SMTP', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({
      SMTP_URL: smtp.url,
      APP_URL: APP,
      MAIL_FROM: 'Platform <no-reply@platform.test>',
      ACCOUNT_MAIL_PER_HOUR: '2',
    });
  });
  afterAll(async () => {
    await t?.close();
    await smtp?.close();
  });

  async function mailsTo(email: string) {
    await t.deps.jobs.drain();
    return smtp.to(email);
  }

  async function register(email = newEmail()) {
    const res = await t.api('POST', '/api/auth/register', {
      body: { email, password: PASSWORD, name: 'Mail Tester' },
    });
    expect(res.status).toBe(201);
    return { email, tokens: res.body as { accessToken: string; refreshToken: string; user: { id: number } } };
  }

  async function resetMail(email: string) {
    const res = await t.api('POST', '/api/auth/request-password-reset', { body: { email } });
    expect(res.status).toBe(202);
    return (await mailsTo(email)).filter((m) => m.subject === 'Reset your password').at(-1);
  }

  describe('verify-email', () => {
    it('registration sends the verification mail, and its token verifies the address once', async () => {
      const { email, tokens } = await register();
      const mails = await mailsTo(email);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.subject).toBe('Confirm your email address');
      expect(mails[0]!.from).toBe('no-reply@platform.test');
      const token = tokenIn(mails[0], 'verify-email');

      // Stored hashed: the raw token is nowhere in the database.
      const rows = await t.deps.db
        .selectFrom('account_tokens')
        .select('token_hash')
        .where('user_id', '=', tokens.user.id)
        .execute();
      expect(rows.map((r) => r.token_hash)).toEqual([sha256(token)]);

      const res = await t.api('POST', '/api/auth/verify-email', { body: { token } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ verified: true });
      const profile = await t.api('GET', '/api/user/profile', { token: tokens.accessToken });
      expect(profile.body.emailVerified).toBe(true);

      const again = await t.api('POST', '/api/auth/verify-email', { body: { token } });
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('validation_failed');
      expect(again.body.errors).toEqual([{ path: 'body.token', message: expect.any(String) }]);
    });

    it('a tampered token is refused and does not spend the real one', async () => {
      const { email } = await register();
      const token = tokenIn((await mailsTo(email))[0], 'verify-email');
      expect((await t.api('POST', '/api/auth/verify-email', { body: { token: tamper(token) } })).status).toBe(
        400,
      );
      expect((await t.api('POST', '/api/auth/verify-email', { body: { token: 'not-a-token' } })).status).toBe(
        400,
      );
      expect((await t.api('POST', '/api/auth/verify-email', { body: { token } })).status).toBe(200);
    });

    it('an expired token is refused', async () => {
      const { email, tokens } = await register();
      const token = tokenIn((await mailsTo(email))[0], 'verify-email');
      await t.deps.db
        .updateTable('account_tokens')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('token_hash', '=', sha256(token))
        .execute();
      expectInvalidToken(await t.api('POST', '/api/auth/verify-email', { body: { token } }));
      const profile = await t.api('GET', '/api/user/profile', { token: tokens.accessToken });
      expect(profile.body.emailVerified).toBe(false);
    });

    it('a token sent to an address the account no longer has verifies nothing', async () => {
      const { email, tokens } = await register();
      const token = tokenIn((await mailsTo(email))[0], 'verify-email');
      await t.deps.db
        .updateTable('users')
        .set({ email: newEmail() })
        .where('id', '=', tokens.user.id)
        .execute();
      expectInvalidToken(await t.api('POST', '/api/auth/verify-email', { body: { token } }));
      const profile = await t.api('GET', '/api/user/profile', { token: tokens.accessToken });
      expect(profile.body.emailVerified).toBe(false);
    });

    it('bad input is 400', async () => {
      expect((await t.api('POST', '/api/auth/verify-email', { body: {} })).status).toBe(400);
      expect((await t.api('POST', '/api/auth/verify-email', { body: { token: '' } })).status).toBe(400);
    });

    it('resend-verification: 202 for any address, a new mail only for an unverified account', async () => {
      const { email } = await register();
      const unknown = newEmail();
      const a = await t.api('POST', '/api/auth/resend-verification', { body: { email: unknown } });
      const b = await t.api('POST', '/api/auth/resend-verification', {
        body: { email: email.toUpperCase() },
      });
      expect([a.status, b.status]).toEqual([202, 202]);
      expect(a.body).toEqual(b.body);
      expect(await mailsTo(unknown)).toHaveLength(0);
      const mails = await mailsTo(email);
      expect(mails).toHaveLength(2);
      expect(
        (
          await t.api('POST', '/api/auth/verify-email', {
            body: { token: tokenIn(mails[1], 'verify-email') },
          })
        ).status,
      ).toBe(200);
    });
  });

  describe('request-password-reset', () => {
    it('answers 202 alike for known and unknown addresses; only the account owner gets a mail', async () => {
      const user = await createUser(t, 'public');
      const unknown = newEmail();
      const known = await t.api('POST', '/api/auth/request-password-reset', { body: { email: user.email } });
      const missing = await t.api('POST', '/api/auth/request-password-reset', { body: { email: unknown } });
      expect(known.status).toBe(202);
      expect(missing.status).toBe(202);
      expect(missing.body).toEqual(known.body);
      expect(missing.text).toBe(known.text);
      expect(await mailsTo(unknown)).toHaveLength(0);
      const mails = await mailsTo(user.email);
      expect(mails).toHaveLength(1);
      expect(mails[0]!.subject).toBe('Reset your password');
      tokenIn(mails[0], 'reset-password');
    });

    it('bad input is 400', async () => {
      expect(
        (await t.api('POST', '/api/auth/request-password-reset', { body: { email: 'not-an-email' } })).status,
      ).toBe(400);
      expect((await t.api('POST', '/api/auth/request-password-reset', { body: {} })).status).toBe(400);
    });

    it('sends at most ACCOUNT_MAIL_PER_HOUR mails per address, still answering 202', async () => {
      const user = await createUser(t, 'public');
      for (let i = 0; i < 3; i++)
        expect(
          (await t.api('POST', '/api/auth/request-password-reset', { body: { email: user.email } })).status,
        ).toBe(202);
      expect(await mailsTo(user.email)).toHaveLength(2);
    });
  });

  describe('reset-password', () => {
    it('sets the new password, signs out every session, and works once', async () => {
      const user = await createUser(t, 'public');
      const second = await t.api('POST', '/api/auth/login', {
        body: { email: user.email, password: user.password, clientType: 'mobile' },
      });
      const token = tokenIn(await resetMail(user.email), 'reset-password');

      const res = await t.api('POST', '/api/auth/reset-password', {
        body: { token, password: 'a brand new passphrase' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ reset: true });

      // the API contract: every refresh token of the user is revoked.
      expect(
        (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status,
      ).toBe(401);
      expect(
        (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: second.body.refreshToken } }))
          .status,
      ).toBe(401);
      expect(
        (await t.api('POST', '/api/auth/login', { body: { email: user.email, password: user.password } }))
          .status,
      ).toBe(401);
      // And so is every access token issued before the reset (their sessions ended).
      for (const accessToken of [user.accessToken, second.body.accessToken as string]) {
        const profile = await t.api('GET', '/api/user/profile', { token: accessToken });
        expect(profile.status).toBe(401);
        expect(profile.body.code).toBe('unauthenticated');
      }
      const fresh = await t.api('POST', '/api/auth/login', {
        body: { email: user.email, password: 'a brand new passphrase' },
      });
      expect(fresh.status).toBe(200);
      expect((await t.api('GET', '/api/user/profile', { token: fresh.body.accessToken })).status).toBe(200);
      // Following the link proved the mailbox.
      expect(fresh.body.user.emailVerified).toBe(true);

      const again = await t.api('POST', '/api/auth/reset-password', {
        body: { token, password: 'yet another passphrase' },
      });
      expect(again.status).toBe(400);
      expect(again.body.code).toBe('validation_failed');
    });

    it('a reset spends the older links too', async () => {
      const user = await createUser(t, 'public');
      const older = tokenIn(await resetMail(user.email), 'reset-password');
      const newer = tokenIn(await resetMail(user.email), 'reset-password');
      expect(older).not.toBe(newer);
      expect(
        (
          await t.api('POST', '/api/auth/reset-password', {
            body: { token: newer, password: 'first new passphrase' },
          })
        ).status,
      ).toBe(200);
      expect(
        (
          await t.api('POST', '/api/auth/reset-password', {
            body: { token: older, password: 'second new passphrase' },
          })
        ).status,
      ).toBe(400);
    });

    it('a tampered token or a verification token is refused; the real one still works', async () => {
      const { email } = await register();
      const verifyToken = tokenIn((await mailsTo(email))[0], 'verify-email');
      const token = tokenIn(await resetMail(email), 'reset-password');
      expect(
        (
          await t.api('POST', '/api/auth/reset-password', {
            body: { token: tamper(token), password: 'tampered passphrase' },
          })
        ).status,
      ).toBe(400);
      // A token is good for its own purpose only.
      expect(
        (
          await t.api('POST', '/api/auth/reset-password', {
            body: { token: verifyToken, password: 'wrong purpose pass' },
          })
        ).status,
      ).toBe(400);
      expect((await t.api('POST', '/api/auth/verify-email', { body: { token } })).status).toBe(400);
      expect(
        (
          await t.api('POST', '/api/auth/reset-password', {
            body: { token, password: 'the real new passphrase' },
          })
        ).status,
      ).toBe(200);
      expect((await t.api('POST', '/api/auth/login', { body: { email, password: PASSWORD } })).status).toBe(
        401,
      );
    });

    it('an expired token is refused and the password stays', async () => {
      const user = await createUser(t, 'public');
      const token = tokenIn(await resetMail(user.email), 'reset-password');
      await t.deps.db
        .updateTable('account_tokens')
        .set({ expires_at: new Date(Date.now() - 1000) })
        .where('token_hash', '=', sha256(token))
        .execute();
      expect(
        (
          await t.api('POST', '/api/auth/reset-password', {
            body: { token, password: 'too late passphrase' },
          })
        ).status,
      ).toBe(400);
      expect(
        (await t.api('POST', '/api/auth/login', { body: { email: user.email, password: user.password } }))
          .status,
      ).toBe(200);
      expect(
        (await t.api('POST', '/api/auth/refresh', { body: { refreshToken: user.refreshToken } })).status,
      ).toBe(200);
    });

    it('the password rules apply (8 to 256 characters), without spending the token', async () => {
      const user = await createUser(t, 'public');
      const token = tokenIn(await resetMail(user.email), 'reset-password');
      const short = await t.api('POST', '/api/auth/reset-password', { body: { token, password: 'short' } });
      expect(short.status).toBe(400);
      expect(short.body.errors.map((e: { path: string }) => e.path)).toContain('body.password');
      const long = await t.api('POST', '/api/auth/reset-password', {
        body: { token, password: 'x'.repeat(257) },
      });
      expect(long.status).toBe(400);
      expect(
        (await t.api('POST', '/api/auth/reset-password', { body: { token, password: 'long enough now' } }))
          .status,
      ).toBe(200);
    });
  });
});

describe('without SMTP: the outbox, and the auth rate limit', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ APP_URL: APP, AUTH_RATE_LIMIT: '4' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('writes mail to the outbox so development works offline', async () => {
    const email = newEmail();
    const reg = await t.api('POST', '/api/auth/register', { body: { email, password: PASSWORD } });
    expect(reg.status).toBe(201);
    await t.deps.jobs.drain();
    const rows = await t.deps.db
      .selectFrom('mail_outbox')
      .selectAll()
      .where('recipient', '=', email)
      .execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.subject).toBe('Confirm your email address');
    const token = tokenIn(
      { from: '', to: [email], subject: '', body: rows[0]!.text_body, raw: '' },
      'verify-email',
    );
    expect((await t.api('POST', '/api/auth/verify-email', { body: { token } })).status).toBe(200);

    // Two of the four auth requests this minute are spent; the third reset request is refused.
    expect((await t.api('POST', '/api/auth/request-password-reset', { body: { email } })).status).toBe(202);
    expect(
      (await t.api('POST', '/api/auth/request-password-reset', { body: { email: newEmail() } })).status,
    ).toBe(202);
    const limited = await t.api('POST', '/api/auth/request-password-reset', { body: { email } });
    expect(limited.status).toBe(429);
    expect(limited.body.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBeTruthy();
  });
});
