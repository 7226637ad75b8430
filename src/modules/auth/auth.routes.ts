import type { App } from '../../platform/http/types.js';
import type { AuthService } from './auth.service.js';
import { problems, noContent } from '../../platform/http/types.js';
import { loginBody, refreshBody, registerBody, tokenBody, tokenResponse } from './auth.schemas.js';
import { publicAuthRoute } from './auth.config.js';

export function authRoutes(app: App, { auth, authPerMinute }: { auth: AuthService; authPerMinute: number }) {
  const config = publicAuthRoute(authPerMinute);
  const tags = ['auth'];

  app.post(
    '/api/auth/register',
    {
      config,
      schema: {
        tags,
        summary: 'Register with email and password',
        description:
          'Creates an account (role carbon, account type public) and signs it in: the answer carries an access token, a refresh token and the profile. A verification mail is queued for the address. Public; an address already in use is 409 `conflict`; the auth routes share a per-IP rate limit (429).',
        body: registerBody,
        response: { 201: tokenResponse, ...problems(400, 409, 429) },
      },
    },
    async (req, reply) => {
      const { tokens } = await auth.register(req.body);
      return reply.status(201).send(tokens);
    },
  );

  app.post(
    '/api/auth/login',
    {
      config,
      schema: {
        tags,
        summary: 'Sign in with email and password',
        description:
          'Signs in with email and password and starts a new session (a refresh-token family), so several sessions coexist. A wrong email or password is 401 `invalid_credentials`; repeated failures for one IP and email are 429 for a while, even with the right password.',
        body: loginBody,
        response: { 200: tokenResponse, ...problems(400, 401, 429) },
      },
    },
    async (req) => auth.login(req.body.email, req.body.password, req.body.clientType, req.ip),
  );

  app.post(
    '/api/auth/token',
    {
      config,
      schema: {
        tags,
        summary: 'Native-client token request (no redirect)',
        description:
          'The same sign-in as /api/auth/login for native clients (game, mobile, VR, AR), which must name their `clientType`: no redirect, tokens in the body.',
        body: tokenBody,
        response: { 200: tokenResponse, ...problems(400, 401, 429) },
      },
    },
    async (req) => auth.login(req.body.email, req.body.password, req.body.clientType, req.ip),
  );

  app.post(
    '/api/auth/refresh',
    {
      config,
      schema: {
        tags,
        summary: 'Trade a refresh token for new tokens (rotation; reuse revokes the family)',
        description:
          'Trades a refresh token for a new access token and a new refresh token; the old refresh token is spent. Presenting a spent one again revokes its whole session (401 `refresh_token_reused`): a stolen token stops working for both holders.',
        body: refreshBody,
        response: { 200: tokenResponse, ...problems(400, 401, 429) },
      },
    },
    async (req) => auth.refresh(req.body.refreshToken),
  );

  app.post(
    '/api/auth/logout',
    {
      config,
      schema: {
        tags,
        summary: 'End the session of a refresh token',
        description:
          "Ends the session of the refresh token: the refresh token and every access token of that session stop working at once; the caller's other sessions go on. 204 even for an unknown token.",
        body: refreshBody,
        response: { 204: noContent, ...problems(400, 429) },
      },
    },
    async (req, reply) => {
      await auth.logout(req.body.refreshToken);
      return reply.status(204).send(null);
    },
  );
}
