// The default namespace's connect-time authentication and token expiry, with a real client.
import { SignJWT } from 'jose';
import { randomUUID } from 'node:crypto';
import { io as connect, type Socket } from 'socket.io-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp } from '../../../test/harness.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

function open(auth: Record<string, unknown> | undefined): Socket {
  return connect(t.url, { auth, transports: ['websocket'], reconnection: false, forceNew: true });
}

function connectError(socket: Socket): Promise<Error & { data?: any }> {
  return new Promise((resolve, reject) => {
    socket.on('connect', () => reject(new Error('connected unexpectedly')));
    socket.on('connect_error', (err) => resolve(err as Error & { data?: any }));
  });
}

describe('default namespace authentication', () => {
  it('connects with a valid access token', async () => {
    const user = await createUser(t);
    const socket = open({ token: user.accessToken });
    await new Promise<void>((resolve, reject) => {
      socket.on('connect', () => resolve());
      socket.on('connect_error', reject);
    });
    socket.close();
  });

  it('fails with an unauthenticated problem when the token is missing or bad', async () => {
    const missing = await connectError(open(undefined));
    expect(missing.data).toMatchObject({
      code: 'unauthenticated',
      status: 401,
      type: '/problems/unauthenticated',
    });
    const bad = await connectError(open({ token: 'not.a.jwt' }));
    expect(bad.data).toMatchObject({ code: 'unauthenticated' });
  });

  it('fails with token_expired for an expired token', async () => {
    const user = await createUser(t);
    const expired = await new SignJWT({ id: user.id, role: 'carbon', name: 'x', accountType: 'public' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(String(user.id))
      .setIssuedAt(Math.floor(Date.now() / 1000) - 100)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 10)
      .setIssuer('assistant-platform')
      .setAudience('assistant-platform')
      .setJti(randomUUID())
      .sign(new TextEncoder().encode('test-secret-test-secret-test-secret-0123456789'));
    const err = await connectError(open({ token: expired }));
    expect(err.data).toMatchObject({ code: 'token_expired', status: 401 });
  });

  it('sends chatError token_expired and disconnects when the token expires', async () => {
    const user = await createUser(t);
    const row = await t.deps.services.users.get(user.id);
    const shortLived = await t.deps.tokens.sign(
      { id: row.id, role: row.role, name: row.name, accountType: row.account_type },
      // Long enough to connect on a busy machine (an expired token is refused at connect instead).
      3,
    );
    const socket = open({ token: shortLived });
    const problem = await new Promise<any>((resolve) => {
      socket.on('chatError', (p) => {
        resolve(p);
      });
    });
    await new Promise<void>((resolve) =>
      socket.disconnected ? resolve() : socket.on('disconnect', () => resolve()),
    );
    expect(problem).toMatchObject({ code: 'token_expired', status: 401 });
    expect(socket.connected).toBe(false);
  });
});

describe('shutdown', () => {
  // On PostgreSQL the realtime adapter takes its LISTEN connection asynchronously at start; a
  // server closed meanwhile once kept that connection and never finished closing.
  it('closes at once right after it started', { timeout: 60_000 }, async () => {
    for (let i = 0; i < 6; i++) {
      const t = await createTestApp();
      const started = Date.now();
      await t.close();
      expect(Date.now() - started).toBeLessThan(10_000);
    }
  });
});
