// The session's client type (spec: "Client types", tracked for analytics and context): named at
// sign-in, carried in every access token of the session (refreshes included), and so on each
// request's and socket's principal, where a chat turn reads it.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  closeSockets,
  connectSocket,
  createTestApp,
  createUser,
  type TestApp,
} from '../../../test/harness.js';
import { userFromApiKey, type AuthDeps } from '../../platform/http/auth.js';
import { CLIENT_TYPES } from '../../platform/security/identity.rules.js';

let t: TestApp;
let user: Awaited<ReturnType<typeof createUser>>;
const password = 'the right password';

beforeAll(async () => {
  t = await createTestApp();
  user = await createUser(t, 'public', { password });
});
afterAll(async () => {
  closeSockets();
  await t.close();
});

/** The claims of an access token, as any client can read them. */
const claimsOf = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

async function signIn(path: '/api/auth/login' | '/api/auth/token', clientType?: string) {
  const r = await t.api('POST', path, {
    body: { email: user.email, password, ...(clientType ? { clientType } : {}) },
  });
  expect(r.status, r.text).toBe(200);
  return r.body as { accessToken: string; refreshToken: string };
}

describe('the client type of a session', () => {
  it('is in every access token of the session, web_portal when login names none', async () => {
    expect(claimsOf((await signIn('/api/auth/login')).accessToken).clientType).toBe('web_portal');
    expect(claimsOf((await signIn('/api/auth/login', 'mobile')).accessToken).clientType).toBe('mobile');
    for (const clientType of CLIENT_TYPES) {
      const tokens = await signIn('/api/auth/token', clientType);
      expect(claimsOf(tokens.accessToken)).toMatchObject({ clientType, id: user.id });
      // A refresh keeps the session's client type.
      const refreshed = await t.api('POST', '/api/auth/refresh', {
        body: { refreshToken: tokens.refreshToken },
      });
      expect(refreshed.status).toBe(200);
      expect(claimsOf(refreshed.body.accessToken as string).clientType).toBe(clientType);
    }
    const registered = await t.api('POST', '/api/auth/register', {
      body: { email: `ct-${user.id}@example.test`, password },
    });
    expect(registered.status).toBe(201);
    expect(claimsOf(registered.body.accessToken as string).clientType).toBe('web_portal');
  });

  it("reaches a chat turn through the socket's principal", async () => {
    const tokens = await signIn('/api/auth/token', 'vr');
    const socket = await connectSocket(t.url, { auth: { token: tokens.accessToken } });
    const handle = vi.spyOn(t.deps.services.chat, 'handleMessage');
    try {
      const { ack } = await socket.send('chatMessage', { message: 'Hello from the headset' });
      expect(ack).toMatchObject({ ok: true });
      expect(handle).toHaveBeenCalledTimes(1);
      expect(handle.mock.calls[0]![0]).toMatchObject({ id: user.id, clientType: 'vr' });
    } finally {
      handle.mockRestore();
      socket.close();
    }
  });

  it('is api for an API key acting as its account', async () => {
    const key = await t.deps.services.auth.createApiKey('ct', ['mcp'], user.id);
    const principal = (await t.deps.services.auth.verifyApiKey(key.key))!;
    const deps: AuthDeps = {
      verifyAccessToken: () => {
        throw new Error('no token here');
      },
      accountState: () => ({ role: 'carbon', accountType: 'public', name: 'n', liveSessions: new Set() }),
      verifyApiKey: () => Promise.resolve(principal),
      adminUserIds: [],
    };
    expect(await userFromApiKey(deps, principal)).toMatchObject({ id: user.id, clientType: 'api' });
  });
});
