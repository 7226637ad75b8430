// The rate-limit counters in Redis (REDIS_URL), on the Redis of REDIS_TEST_URL (default
// redis://127.0.0.1:6379; the file is skipped, saying so, when none answers there): the store's
// windows, and what happens when Redis goes away mid-run, through a TCP proxy the test cuts and
// restores: every limit keeps holding, counted per process, no request fails, and the shared
// counts are used again once Redis is back. Keys are the test's own (a random prefix, a random
// client address), so runs and other users of that Redis never meet.
import { randomBytes, randomInt } from 'node:crypto';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, eventually, type TestApp } from '../../../test/harness.js';
import { startTcpProxy, type TcpProxy } from '../../../test/tcp-proxy.js';
import { REDIS_OPTIONS, RedisCounterStore } from './rate-limit.js';

const target = new URL(process.env.REDIS_TEST_URL ?? 'redis://127.0.0.1:6379');
const reachable = await (async () => {
  const probe = new Redis(target.toString(), {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
})();
if (!reachable) console.warn(`rate-limit.redis.test.ts skipped: no Redis answers at ${target.host}`);

let proxy: TcpProxy;
let direct: Redis;

beforeAll(async () => {
  if (!reachable) return;
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) });
  direct = new Redis(target.toString());
});
afterAll(async () => {
  if (!reachable) return;
  proxy.restore();
  direct.disconnect();
  await proxy.close();
});

/** A client through the proxy, as the service makes it (deps.ts), connected, and a store over it. */
async function storeThroughProxy() {
  const redis = new Redis(`redis://127.0.0.1:${proxy.port}`, REDIS_OPTIONS);
  const prefix = `rl-test-${randomBytes(4).toString('hex')}:`;
  const store = new RedisCounterStore(redis, pino({ level: 'silent' }), prefix);
  await eventually(() => expect(redis.status).toBe('ready'));
  return { redis, prefix, store };
}

describe.runIf(reachable)('RedisCounterStore', () => {
  it('counts hits in a window, peeks and resets, in Redis', async () => {
    const { redis, prefix, store } = await storeThroughProxy();
    try {
      expect((await store.hit('k', 60_000)).count).toBe(1);
      const second = await store.hit('k', 60_000);
      expect(second.count).toBe(2);
      expect(await direct.get(`${prefix}k`)).toBe('2');
      expect(await direct.pttl(`${prefix}k`)).toBeGreaterThan(0);
      expect((await store.peek('k'))?.count).toBe(2);
      await store.reset('k');
      expect(await store.peek('k')).toBeNull();
      const counts = await Promise.all(Array.from({ length: 20 }, () => store.hit('p', 60_000)));
      expect(counts.map((c) => c.count).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 20 }, (_, i) => i + 1),
      );
    } finally {
      redis.disconnect();
    }
  });

  it('Redis going away mid-run: counts go on in the process, then in Redis again once it is back', async () => {
    const { redis, prefix, store } = await storeThroughProxy();
    try {
      expect((await store.hit('k', 60_000)).count).toBe(1);
      expect((await store.hit('k', 60_000)).count).toBe(2);

      proxy.cut();
      // No hit fails: this process counts the window on its own, from its first hit.
      expect((await store.hit('k', 60_000)).count).toBe(1);
      expect((await store.hit('k', 60_000)).count).toBe(2);
      expect((await store.hit('k', 60_000)).count).toBe(3);
      expect((await store.peek('k'))?.count).toBe(3);

      proxy.restore();
      await eventually(() => expect(redis.status).toBe('ready'));
      // Redis kept its window: the shared count goes on from there (the hit the cut caught in
      // flight may have reached Redis too: counted twice, never lost).
      const back = await store.hit('k', 60_000);
      expect(back.count).toBeGreaterThanOrEqual(3);
      expect(await direct.get(`${prefix}k`)).toBe(String(back.count));
    } finally {
      proxy.restore();
      redis.disconnect();
    }
  });
});

describe.runIf(reachable)('the auth limit with REDIS_URL when Redis goes away', () => {
  let t: TestApp;
  const LIMIT = 3;
  // A client address of this run alone: the limit's key is per address.
  const ip = `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;
  beforeAll(async () => {
    if (!reachable) return;
    t = await createTestApp({
      REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
      AUTH_RATE_LIMIT: String(LIMIT),
      TRUST_PROXY: 'true',
    });
  });
  afterAll(async () => {
    proxy.restore();
    await t?.close();
  });

  const providers = () => t.api('GET', '/api/auth/providers', { headers: { 'x-forwarded-for': ip } });

  it('is shared through Redis, still holds per process while Redis is away, and no request fails', async () => {
    for (let i = 0; i < LIMIT; i++) expect((await providers()).status).toBe(200);
    expect((await providers()).status).toBe(429);
    expect(Number(await direct.get(`rl:http:auth:${ip}`))).toBe(LIMIT + 1);

    proxy.cut();
    const away = [];
    for (let i = 0; i < LIMIT + 1; i++) away.push((await providers()).status);
    // Counted in the process from a fresh window: the limit holds, nothing answers 500.
    expect(away).toEqual([...Array<number>(LIMIT).fill(200), 429]);

    proxy.restore();
    await eventually(() => expect(t.deps.redis!.status).toBe('ready'));
    const shared = Number(await direct.get(`rl:http:auth:${ip}`));
    expect((await providers()).status).toBe(429);
    expect(Number(await direct.get(`rl:http:auth:${ip}`))).toBe(shared + 1);
  });
});
