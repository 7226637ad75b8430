// Email verification and password reset (spec "Authentication endpoints"; the API contract
// "Identity and tokens").
import { z } from 'zod';
import type { App } from '../../platform/http/types.js';
import type { AccountEmailService } from './account-email.service.js';
import { problems } from '../../platform/http/types.js';
import { emailSchema, passwordSchema } from './auth.schemas.js';
import { publicAuthRoute } from './auth.config.js';

const tokenField = z.string().min(1).max(200);

export function accountEmailRoutes(
  app: App,
  { accountEmail, authPerMinute }: { accountEmail: AccountEmailService; authPerMinute: number },
) {
  const config = publicAuthRoute(authPerMinute);
  const tags = ['auth'];
  const accepted = z.object({ accepted: z.literal(true) });

  app.post(
    '/api/auth/verify-email',
    {
      config,
      schema: {
        tags,
        summary: 'Verify an email address with the token from the verification mail (single use)',
        description:
          'Marks the address verified with the single-use token from the verification mail. A bad, expired, used or tampered token is 400 `validation_failed` on `body.token`.',
        body: z.object({ token: tokenField }).meta({ examples: [{ token: 'vt_3kq9wP2xY8sLr0aB' }] }),
        response: { 200: z.object({ verified: z.literal(true) }), ...problems(400, 429) },
      },
    },
    async (req) => accountEmail.verifyEmail(req.body.token),
  );

  app.post(
    '/api/auth/request-password-reset',
    {
      config,
      schema: {
        tags,
        summary: 'Ask for a password reset mail; 202 whether or not the account exists',
        description:
          'Queues a password-reset mail when an account has this address; the answer is the same 202 either way, so it does not tell whether an account exists. Mails per address are limited per hour (extra requests are dropped silently).',
        body: z.object({ email: emailSchema }).meta({ examples: [{ email: 'ada@example.com' }] }),
        response: { 202: accepted, ...problems(400, 429) },
      },
    },
    async (req, reply) => {
      await accountEmail.requestPasswordReset(req.body.email);
      return reply.status(202).send({ accepted: true });
    },
  );

  app.post(
    '/api/auth/reset-password',
    {
      config,
      schema: {
        tags,
        summary: 'Set a new password with the token from the reset mail; signs out every session',
        description:
          'Sets a new password with the single-use token from the reset mail and ends every session of the account. Answers `{ reset: true }`; a bad or used token is 400 on `body.token`.',
        body: z
          .object({ token: tokenField, password: passwordSchema })
          .meta({ examples: [{ token: 'rs_7Hn2cQ5vT1mZ', password: 'a new long password' }] }),
        response: { 200: z.object({ reset: z.literal(true) }), ...problems(400, 429) },
      },
    },
    async (req) => accountEmail.resetPassword(req.body.token, req.body.password),
  );

  // Beyond the spec: a verification link expires, so there must be a way to get a new one.
  app.post(
    '/api/auth/resend-verification',
    {
      config,
      schema: {
        tags,
        summary: 'Ask for a new verification mail; 202 whether or not the account exists',
        description:
          'Queues a new verification mail for an account with this address that is not verified yet; 202 whatever the case.',
        body: z.object({ email: emailSchema }).meta({ examples: [{ email: 'ada@example.com' }] }),
        response: { 202: accepted, ...problems(400, 429) },
      },
    },
    async (req, reply) => {
      await accountEmail.requestVerification(req.body.email);
      return reply.status(202).send({ accepted: true });
    },
  );
}
