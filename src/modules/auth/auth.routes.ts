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
