// Rotating the JWT secret without logging anyone out (README, "Rotating the JWT secret"): a token
// names its key (`kid`); a node restarted with a new JWT_SECRET and the old one in
// JWT_PREVIOUS_SECRETS still accepts the old key's tokens and refreshes under the new key; once
// the old key is removed, or for a kid no key has, the token is 401 on REST, MCP and both socket
// namespaces.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keyId } from '../src/platform/security/jwt.js';
import { testEnv } from './env.js';
import { connectSocket, createRestartableApp, createTestApp, createUser, type TestApp } from './harness.js';

const KEY_A = 'rotation-test-key-a-rotation-test-key-a-0123';
const KEY_B = 'rotation-test-key-b-rotation-test-key-b-0123';

const kidOf = (token: string) =>
  (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid?: unknown }).kid;

function mcpList(t: TestApp, token: string) {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
  });
}

async function expectAccepted(t: TestApp, token: string) {
  expect((await t.api('GET', '/api/user/profile', { token })).status).toBe(200);
  const mcp = await mcpList(t, token);
  expect(mcp.status).toBe(200);
  expect(await mcp.text()).toContain('"tools"');
  const socket = await connectSocket(t.url, { auth: { token } });
  expect(socket.socket.connected).toBe(true);
  // Closed now: an app does not close while a socket of it is open.
  socket.socket.close();
}

async function expectRefused(t: TestApp, token: string) {
  const rest = await t.api('GET', '/api/user/profile', { token });
  expect(rest.status).toBe(401);
  expect(rest.body.code).toBe('unauthenticated');
  const mcp = await mcpList(t, token);
  expect(mcp.status).toBe(401);
  expect(((await mcp.json()) as { code: string }).code).toBe('unauthenticated');
  for (const namespace of ['', '/observer'])
    await expect(connectSocket(t.url, { namespace, auth: { token } })).rejects.toMatchObject({
      code: 'unauthenticated',
    });
}

// Three starts of an app on a data directory in one test: a generous failsafe for a busy machine,
// not a timing claim.
describe('rotating the JWT secret', { timeout: 120_000 }, () => {
  it("keeps the old key's tokens working until the key is removed, and refreshes under the new key", async () => {
    const apps = await createRestartableApp({ JWT_SECRET: KEY_A });
    try {
      const user = await createUser(apps.first, 'cso');
      expect(kidOf(user.accessToken)).toBe(keyId(KEY_A));

      const rotated = await apps.restart(undefined, { JWT_SECRET: KEY_B, JWT_PREVIOUS_SECRETS: KEY_A });
      await expectAccepted(rotated, user.accessToken);
      const refreshed = await rotated.api('POST', '/api/auth/refresh', {
        body: { refreshToken: user.refreshToken },
      });
      expect(refreshed.status).toBe(200);
      expect(kidOf(refreshed.body.accessToken)).toBe(keyId(KEY_B));
      await expectAccepted(rotated, refreshed.body.accessToken);

      const removed = await apps.restart(undefined, { JWT_SECRET: KEY_B });
      await expectRefused(removed, user.accessToken);
      await expectAccepted(removed, refreshed.body.accessToken);
    } finally {
      await apps.close();
    }
  });

  it('refuses a token whose kid names no key, even with a good signature', async () => {
    const t = await createTestApp();
    try {
      const user = await createUser(t, 'cso');
      const [head, body] = user.accessToken.split('.') as [string, string, string];
      const header = JSON.parse(Buffer.from(head, 'base64url').toString()) as Record<string, unknown>;
      const forged = Buffer.from(JSON.stringify({ ...header, kid: 'no-such-key-0000' })).toString(
        'base64url',
      );
      // Signed with the very secret the app signs with: only the kid is wrong.
      const secret = testEnv().JWT_SECRET!;
      const signature = createHmac('sha256', secret).update(`${forged}.${body}`).digest('base64url');
      await expectAccepted(t, user.accessToken);
      await expectRefused(t, `${forged}.${body}.${signature}`);
    } finally {
      await t.close();
    }
  });
});
