// Chat-platform channel configuration over HTTP, on the real app and database.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;
let user: TestUser;

beforeAll(async () => {
  t = await createTestApp();
  [admin, user] = await Promise.all([createUser(t, 'cso'), createUser(t, 'public')]);
});
afterAll(() => t.close());

const post = (body: unknown, token?: string) =>
  t.api('POST', '/api/chat-platform/channel/config', { body, ...(token ? { token } : {}) });
const get = (channelId: string, token?: string) =>
  t.api('GET', `/api/chat-platform/channel/config/${encodeURIComponent(channelId)}`, token ? { token } : {});

describe('POST /api/chat-platform/channel/config', () => {
  it('needs an admin', async () => {
    expect((await post({ channelId: 'c1', protocolId: 'tech_protocol_v1' })).status).toBe(401);
    const res = await post({ channelId: 'c1', protocolId: 'tech_protocol_v1' }, user.accessToken);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('refuses a bad body', async () => {
    const res = await post({ channelId: '', protocolId: 'nope' }, admin.accessToken);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_failed');
    expect((await post({ channelId: 'c1' }, admin.accessToken)).status).toBe(400);
    expect(
      (await post({ channelId: 'c1', protocolId: 'tech_protocol_v1', color: 'red' }, admin.accessToken))
        .status,
    ).toBe(400);
  });

  it('answers 400 for an unknown protocol id', async () => {
    const res = await post({ channelId: 'c1', protocolId: 'no_such_protocol_v1' }, admin.accessToken);
    expect(res.status).toBe(400);
    expect(res.body.errors).toEqual([
      { path: 'protocolId', message: 'no protocol no_such_protocol_v1 exists' },
    ]);
    expect((await get('c1', admin.accessToken)).status).toBe(404);
  });

  it('sets and replaces the configuration', async () => {
    const res = await post(
      { channelId: '1234567890', guildId: '42', protocolId: 'tech_protocol_v1' },
      admin.accessToken,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      channelId: '1234567890',
      guildId: '42',
      protocolId: 'tech_protocol_v1',
    });
    const again = await post(
      { channelId: '1234567890', protocolId: 'public_protocol_v1' },
      admin.accessToken,
    );
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({
      channelId: '1234567890',
      guildId: null,
      protocolId: 'public_protocol_v1',
    });
    expect(again.body.createdAt).toBe(res.body.createdAt);
  });
});

describe('GET /api/chat-platform/channel/config/<channelId>', () => {
  it('needs a token', async () => {
    expect((await get('1234567890')).status).toBe(401);
  });

  it('returns the configuration to any signed-in user, or 404', async () => {
    const res = await get('1234567890', user.accessToken);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ channelId: '1234567890', protocolId: 'public_protocol_v1' });
    const missing = await get('no-such-channel', user.accessToken);
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('not_found');
  });

  it('refuses an over-long channel id', async () => {
    expect(
      (await post({ channelId: 'x'.repeat(101), protocolId: 'public_protocol_v1' }, admin.accessToken))
        .status,
    ).toBe(400);
  });
});
