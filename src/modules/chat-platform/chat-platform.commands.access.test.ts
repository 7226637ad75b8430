// Who may send the chat-platform commands, over HTTP on the real app and database (contract
// "Chat-platform commands"): no credentials, a non-admin token, a key without the scope or naming
// no linked platform user, the linked account's own rights, a link changed or removed meanwhile,
// each refusal with `text`; and the admin routes that link platform users to accounts (who may
// call them, validation, link, relink, read, list, unlink, the OpenAPI document). The app and
// helpers are in chat-platform.commands.fixtures.ts.
import { describe, expect, it } from 'vitest';
import {
  ADMIN_PLATFORM_ID,
  USER_PLATFORM_ID,
  admin,
  command,
  commandKey,
  createInstance,
  link,
  ok,
  refused,
  sameProblem,
  syncKey,
  t,
  useCommandsApp,
  user,
} from './chat-platform.commands.fixtures.js';

useCommandsApp();

describe('who may send commands', () => {
  it('answers 401 without credentials and 403 to a non-admin token, each with text', async () => {
    refused(
      await t.api('POST', '/api/chat-platform/commands', {
        body: { command: 'observer-instance', args: {}, channelId: 'c' },
      }),
      401,
      'unauthenticated',
    );
    const r = refused(await command({ token: user.accessToken }, 'observer-instance', {}), 403, 'forbidden');
    expect(r.text).toMatch(/^Forbidden: /);
  });

  it('refuses a key without the scope, a key naming no platform user, and an unlinked one', async () => {
    const noScope = refused(
      await command({ apiKey: syncKey, platformUserId: ADMIN_PLATFORM_ID }, 'observer-instance'),
      403,
      'forbidden',
    );
    expect(noScope.requiredScope).toBe('chat-platform:command');
    const unnamed = refused(await command({ apiKey: commandKey }, 'observer-instance'), 403, 'forbidden');
    expect(unnamed.detail).toMatch(/platformUserId/);
    const unlinked = refused(
      await command({ apiKey: commandKey, platformUserId: '199999999999999999' }, 'observer-instance'),
      403,
      'forbidden',
    );
    expect(unlinked.text).toMatch(/199999999999999999 is not linked/);
  });

  it('runs with the linked account’s own rights: 404 for an instance it does not take part in', async () => {
    const i = await createInstance(admin);
    const asUser = { apiKey: commandKey, platformUserId: USER_PLATFORM_ID };
    const hidden = await command(asUser, 'observer-instance', { instance_id: i.id });
    refused(hidden, 404, 'not_found');
    sameProblem(hidden, await t.api('GET', `/api/protocol/instances/${i.id}`, { token: user.accessToken }));
    // Its own instance: a participant, but not an approver (403, as the REST route says).
    const own = await createInstance(user, 'Mine');
    ok(await command(asUser, 'observer-instance', { instance_id: own.id }), 'observer-instance');
    const approve = await command(asUser, 'observer-approve', { instance_id: own.id });
    refused(approve, 403, 'forbidden');
    sameProblem(
      approve,
      await t.api('POST', `/api/protocol/instances/${own.id}/approvals`, {
        token: user.accessToken,
        body: {},
      }),
    );
  });

  it('follows the link as it is now: relinked, unlinked', async () => {
    const pid = '100000000000000003';
    const own = await createInstance(user, 'Relinked');
    expect((await link(pid, admin.id)).status).toBe(201);
    ok(
      await command({ apiKey: commandKey, platformUserId: pid }, 'observer-approve', { instance_id: own.id }),
      'observer-approve',
    );
    expect((await link(pid, user.id)).status).toBe(200);
    refused(
      await command({ apiKey: commandKey, platformUserId: pid }, 'observer-approve', { instance_id: own.id }),
      403,
      'forbidden',
    );
    expect(
      (await t.api('DELETE', `/api/admin/chat-platform/users/${pid}`, { token: admin.accessToken })).status,
    ).toBe(204);
    const gone = refused(
      await command({ apiKey: commandKey, platformUserId: pid }, 'observer-instance', {
        instance_id: own.id,
      }),
      403,
      'forbidden',
    );
    expect(gone.detail).toMatch(/not linked/);
  });
});

describe('linked platform users (admin)', () => {
  const pid = '100000000000000009';
  const path = `/api/admin/chat-platform/users/${pid}`;

  it('needs an admin for every route', async () => {
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { userId: user.id }],
      ['DELETE', undefined],
    ] as const) {
      expect((await t.api(method, path, { body })).status).toBe(401);
      const r = await t.api(method, path, { token: user.accessToken, body });
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    expect((await t.api('GET', '/api/admin/chat-platform/users', { token: user.accessToken })).status).toBe(
      403,
    );
    expect((await t.api('GET', '/api/admin/chat-platform/users', { apiKey: commandKey })).status).toBe(401);
  });

  it('validates the link', async () => {
    for (const body of [{}, { userId: 'x' }, { userId: 0 }, { userId: user.id, extra: 1 }]) {
      const r = await t.api('PUT', path, { token: admin.accessToken, body });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
    const unknown = await link(pid, 987654321);
    expect(unknown.status).toBe(400);
    expect(unknown.body.errors).toEqual([{ path: 'userId', message: 'no user 987654321 exists' }]);
    // A platform user id is at most 100 characters: the router's limit for a path segment.
    expect((await link('x'.repeat(101), user.id)).status).toBe(414);
    expect((await link('x'.repeat(100), user.id)).status).toBe(201);
    expect((await t.api('GET', path, { token: admin.accessToken })).status).toBe(404);
  });

  it('links, relinks, reads, lists and unlinks', async () => {
    const created = await link(pid, user.id);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ platformUserId: pid, userId: user.id, linkedByUserId: admin.id });
    const relinked = await link(pid, admin.id);
    expect(relinked.status).toBe(200);
    expect(relinked.body).toMatchObject({
      platformUserId: pid,
      userId: admin.id,
      createdAt: created.body.createdAt,
    });
    expect((await t.api('GET', path, { token: admin.accessToken })).body).toEqual(relinked.body);

    const all = await t.api('GET', '/api/admin/chat-platform/users?limit=2', { token: admin.accessToken });
    expect(all.status).toBe(200);
    expect(all.body).toMatchObject({ limit: 2, offset: 0 });
    expect(all.body.total).toBeGreaterThanOrEqual(3);
    expect(all.body.links.map((l: any) => l.platformUserId)).toEqual([ADMIN_PLATFORM_ID, USER_PLATFORM_ID]);
    const mine = await t.api('GET', `/api/admin/chat-platform/users?userId=${admin.id}`, {
      token: admin.accessToken,
    });
    expect(mine.body.links.every((l: any) => l.userId === admin.id)).toBe(true);
    expect(mine.body.links.map((l: any) => l.platformUserId)).toContain(pid);

    expect((await t.api('DELETE', path, { token: admin.accessToken })).status).toBe(204);
    expect((await t.api('DELETE', path, { token: admin.accessToken })).status).toBe(404);
    expect((await t.api('GET', path, { token: admin.accessToken })).status).toBe(404);
  });

  it('are documented in the OpenAPI document with the command route', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    expect(Object.keys(doc.paths['/api/admin/chat-platform/users/{platformUserId}']).sort()).toEqual([
      'delete',
      'get',
      'put',
    ]);
    expect(doc.paths['/api/admin/chat-platform/users'].get).toBeDefined();
    expect(doc.paths['/api/chat-platform/commands'].post.security).toEqual([{ bearer: [] }, { apiKey: [] }]);
    // The new scope is one an API key may be given.
    expect(JSON.stringify(doc.paths['/api/admin/api-keys'])).toContain('chat-platform:command');
  });
});
