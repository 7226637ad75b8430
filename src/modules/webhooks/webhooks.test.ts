// Webhooks for timeline events on the real server: a real HTTP receiver on loopback (reachable
// only because the test app sets SSRF_ALLOW_LOOPBACK_FOR_TESTS, which production refuses) checks
// each delivery's Standard Webhooks signature itself; retries after a 500, a final failure, the
// SSRF guard at registration and at delivery, deliveries that survive a lost after-commit, who
// may call.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, eventually, type TestApp, type TestUser } from '../../../test/harness.js';
import type { KyselyPlugin } from 'kysely';
import { sql, transaction } from '../../platform/db/database.js';
import { UnitOfWork, unitOfWorkRegistry } from '../../platform/db/unit-of-work.js';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

let t: TestApp;
let admin: TestUser;
let user: TestUser;
let receiver: Server;
let origin: string;
const received: Received[] = [];
/** Statuses a path answers, in turn (then 200). */
const script = new Map<string, number[]>();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const status = script.get(path)?.shift() ?? 200;
      res.writeHead(status, { 'content-type': 'text/plain' });
      res.end(status === 200 ? 'ok' : 'receiver broken');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  t = await createTestApp({
    SSRF_ALLOW_LOOPBACK_FOR_TESTS: 'true',
    WEBHOOK_MAX_ATTEMPTS: '2',
    WEBHOOK_RETRY_DELAY: '1',
  });
  admin = await createUser(t, 'cso');
  user = await createUser(t, 'public');
});
afterAll(async () => {
  await t.close();
  receiver.closeAllConnections();
  await new Promise((ok) => receiver.close(ok));
});

const api = (method: string, path: string, body?: unknown, who: TestUser = admin) =>
  t.api(method, path, { token: who.accessToken, body });

async function register(path: string, body: Record<string, unknown> = {}) {
  // By default a type no event has: such an endpoint gets its test deliveries only.
  const r = await api('POST', '/api/admin/webhooks', {
    url: `${origin}${path}`,
    eventTypes: ['no_such_event'],
    ...body,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; secret: string; url: string };
}

async function newInstance(body: Record<string, unknown>): Promise<number> {
  const r = await api('POST', '/api/admin/instances', { source: 'portal', ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.id;
}

const deliveries = async (id: string, query = '') =>
  (await api('GET', `/api/admin/webhooks/${id}/deliveries${query}`)).body.deliveries as any[];

/** The receiver's own check, written from the Standard Webhooks specification (not our code). */
function verify(secret: string, r: Received): boolean {
  const id = String(r.headers['webhook-id']);
  const timestamp = String(r.headers['webhook-timestamp']);
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${r.body}`).digest('base64');
  return String(r.headers['webhook-signature'])
    .split(' ')
    .some((s) => s === `v1,${expected}`);
}

const at = (path: string) => received.filter((r) => r.path === path);

describe('who may call', () => {
  it('admins only: 403 for other users, 401 without a token', async () => {
    const hook = await register('/access');
    for (const [method, path] of [
      ['GET', '/api/admin/webhooks'],
      ['POST', '/api/admin/webhooks'],
      ['GET', `/api/admin/webhooks/${hook.id}`],
      ['PATCH', `/api/admin/webhooks/${hook.id}`],
      ['DELETE', `/api/admin/webhooks/${hook.id}`],
      ['POST', `/api/admin/webhooks/${hook.id}/secret`],
      ['GET', `/api/admin/webhooks/${hook.id}/deliveries`],
      ['POST', `/api/admin/webhooks/${hook.id}/test`],
    ] as const) {
      const asUser = await api(method, path, method === 'GET' || method === 'DELETE' ? undefined : {}, user);
      expect([path, asUser.status, asUser.body.code]).toEqual([path, 403, 'forbidden']);
      expect((await t.api(method, path)).status).toBe(401);
    }
    expect((await api('GET', `/api/admin/webhooks/${hook.id}`)).status).toBe(200);
  });
});

describe('registration', () => {
  it('shows the secret once: never in a read, a list or an update', async () => {
    const hook = await register('/secret-once', {
      description: 'ops',
      eventTypes: ['diary_entry', 'diary_entry'],
    });
    expect(hook).toMatchObject({
      url: `${origin}/secret-once`,
      eventTypes: ['diary_entry'],
      observerId: null,
      description: 'ops',
      enabled: true,
      createdByUserId: admin.id,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]+=*$/),
    });
    const read = await api('GET', `/api/admin/webhooks/${hook.id}`);
    const list = await api('GET', '/api/admin/webhooks?limit=200');
    const patched = await api('PATCH', `/api/admin/webhooks/${hook.id}`, { description: 'changed' });
    for (const body of [read.body, patched.body, ...list.body.webhooks])
      expect(body).not.toHaveProperty('secret');
    expect(list.body.webhooks.map((w: any) => w.id)).toContain(hook.id);
    expect(patched.body.description).toBe('changed');
    // Stored encrypted, not as given.
    const stored = await t.deps.db
      .selectFrom('webhooks')
      .select('secret_ciphertext')
      .where('id', '=', hook.id)
      .executeTakeFirstOrThrow();
    expect(stored.secret_ciphertext).not.toContain(hook.secret.slice(6));
  });

  it.each([
    ['http://169.254.169.254/latest/meta-data/', 'cloud metadata'],
    ['http://10.0.0.5/hook', 'private network'],
    ['http://[fd00::1]/hook', 'unique-local IPv6'],
    ['http://[::ffff:192.168.1.1]/hook', 'IPv4-mapped private'],
    ['ftp://example.com/hook', 'another scheme'],
  ])('refuses %s (%s) with 400 on body.url: the SSRF guard', async (url) => {
    const r = await api('POST', '/api/admin/webhooks', { url, eventTypes: ['*'] });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'body.url' }] });
    const hook = await register('/patched');
    const p = await api('PATCH', `/api/admin/webhooks/${hook.id}`, { url });
    expect(p.status).toBe(400);
    expect((await api('GET', `/api/admin/webhooks/${hook.id}`)).body.url).toBe(`${origin}/patched`);
  });

  it('refuses bad bodies, non-observers and unknown ids', async () => {
    const level5 = await newInstance({ name: 'plain', level: 5 });
    for (const body of [
      {},
      { url: 'not a url', eventTypes: ['*'] },
      { url: `${origin}/x`, eventTypes: [] },
      { url: `${origin}/x`, eventTypes: ['Bad Type'] },
      { url: `${origin}/x`, eventTypes: ['*'], observerId: level5 },
      { url: `${origin}/x`, eventTypes: ['*'], observerId: 987654 },
    ]) {
      const r = await api('POST', '/api/admin/webhooks', body);
      expect([JSON.stringify(body), r.status, r.body.code]).toEqual([
        JSON.stringify(body),
        400,
        'validation_failed',
      ]);
    }
    expect((await api('GET', '/api/admin/webhooks/not-a-uuid')).status).toBe(400);
    const unknown = '00000000-0000-4000-8000-000000000000';
    for (const [method, path] of [
      ['GET', `/api/admin/webhooks/${unknown}`],
      ['PATCH', `/api/admin/webhooks/${unknown}`],
      ['DELETE', `/api/admin/webhooks/${unknown}`],
      ['POST', `/api/admin/webhooks/${unknown}/secret`],
      ['GET', `/api/admin/webhooks/${unknown}/deliveries`],
      ['POST', `/api/admin/webhooks/${unknown}/test`],
    ] as const)
      expect((await api(method, path, method === 'PATCH' ? {} : undefined)).status).toBe(404);
  });
});

describe('delivery', () => {
  it('delivers each matching committed event, signed the Standard Webhooks way', async () => {
    const observerId = await newInstance({ name: 'hooked observer', level: 8 });
    const hook = await register('/signed', { eventTypes: ['instance_created'], observerId });
    // Not delivered: another observer's event, another type of event.
    await newInstance({ name: 'under the root', level: 5 });
    await transaction(t.deps.db, (uow) =>
      t.deps.services.timeline.record(uow, { eventType: 'diary_entry', instanceId: observerId }),
    );
    const instanceId = await newInstance({ name: 'watched', level: 5, parentInstanceId: observerId });

    const [request] = await eventually(() => {
      const got = at('/signed');
      expect(got).toHaveLength(1);
      return got;
    });
    expect(verify(hook.secret, request!)).toBe(true);
    expect(verify(hook.secret, { ...request!, body: request!.body.replace('watched', 'w4tched') })).toBe(
      false,
    );
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    const body = JSON.parse(request!.body);
    expect(body).toMatchObject({
      type: 'instance_created',
      data: { eventType: 'instance_created', instanceId, observerId },
    });
    expect(body.timestamp).toBe(body.data.timelineAt);

    // The log: one delivery (the others never matched), its id the webhook-id, one attempt.
    const log = await eventually(async () => {
      const list = await deliveries(hook.id);
      expect(list.map((d) => d.status)).toEqual(['succeeded']);
      return list;
    });
    expect(log[0]).toMatchObject({
      id: request!.headers['webhook-id'],
      webhookId: hook.id,
      eventId: body.data.id,
      eventType: 'instance_created',
      lastStatusCode: 200,
      lastError: null,
      attempts: [{ attempt: 1, statusCode: 200, error: null }],
    });
    expect(log[0].deliveredAt).not.toBeNull();
  });

  it('retries after a 500, with the same webhook-id, until the receiver takes it', async () => {
    script.set('/flaky', [500]);
    const hook = await register('/flaky');
    const queued = await api('POST', `/api/admin/webhooks/${hook.id}/test`);
    expect(queued.status).toBe(202);
    expect(queued.body).toMatchObject({
      eventType: 'webhook.test',
      status: 'pending',
      eventId: null,
      attempts: [],
    });

    const [done] = await eventually(
      async () => {
        const list = await deliveries(hook.id);
        expect(list[0]?.status).toBe('succeeded');
        return list;
      },
      { timeoutMs: 30_000 },
    );
    expect(done.attempts.map((a: any) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 200],
    ]);
    const requests = at('/flaky');
    expect(requests).toHaveLength(2);
    expect(requests.every((r) => r.headers['webhook-id'] === queued.body.id && verify(hook.secret, r))).toBe(
      true,
    );
    expect(JSON.parse(requests[0]!.body)).toMatchObject({
      type: 'webhook.test',
      data: { webhookId: hook.id },
    });
  });

  it('fails a delivery after its last attempt, with the receiver’s answer logged', async () => {
    script.set('/broken', [500, 503]);
    const hook = await register('/broken');
    await api('POST', `/api/admin/webhooks/${hook.id}/test`);
    const [failed] = await eventually(
      async () => {
        const list = await deliveries(hook.id, '?status=failed');
        expect(list).toHaveLength(1);
        return list;
      },
      { timeoutMs: 30_000 },
    );
    expect(failed).toMatchObject({ lastStatusCode: 503, lastError: 'answered 503: receiver broken' });
    expect(failed.attempts.map((a: any) => a.statusCode)).toEqual([500, 503]);
    expect(await deliveries(hook.id, '?status=succeeded')).toEqual([]);
  });

  it('checks the URL again at delivery: an address refused by then fails at once, unsent', async () => {
    const hook = await register('/moved');
    // As if its name now resolved inside (or it was stored before a rule change).
    await t.deps.db
      .updateTable('webhooks')
      .set({ url: 'http://10.1.2.3/hook' })
      .where('id', '=', hook.id)
      .execute();
    await api('POST', `/api/admin/webhooks/${hook.id}/test`);
    const [failed] = await eventually(async () => {
      const list = await deliveries(hook.id);
      expect(list[0]?.status).toBe('failed');
      return list;
    });
    expect(failed.attempts).toHaveLength(1);
    expect(failed.lastError).toMatch(/^blocked_address: /);
    expect(failed.lastStatusCode).toBeNull();
  });

  it('keeps deliveries that committed with their event even if nothing after the commit ran', async () => {
    const hook = await register('/durable', { eventTypes: ['durability_probe'] });
    const timeline = t.deps.services.timeline;
    // A recording whose after-commit work (bus publish, worker wake-up) is lost, as if the process
    // died right after the commit: the delivery and its job were in the transaction.
    // A unit of work of its own over the transaction: its after-commit work is never run.
    const event = await transaction(t.deps.db, ({ trx }) =>
      timeline.record(new UnitOfWork(trx, unitOfWorkRegistry(t.deps.db)), {
        eventType: 'durability_probe',
        eventText: 'kept',
      }),
    );
    // A rolled-back recording leaves no delivery.
    await expect(
      transaction(t.deps.db, async (uow) => {
        await timeline.record(uow, { eventType: 'durability_probe', eventText: 'rolled back' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');

    await eventually(() => expect(at('/durable')).toHaveLength(1));
    expect(JSON.parse(at('/durable')[0]!.body).data).toMatchObject({ id: event.id, eventText: 'kept' });
    const log = await eventually(async () => {
      const list = await deliveries(hook.id);
      expect(list.map((d) => d.status)).toEqual(['succeeded']);
      return list;
    });
    expect(log.map((d) => d.eventId)).toEqual([event.id]);
  });

  it('writes a 100-event batch’s deliveries and jobs in a bounded number of statements', async () => {
    const observerId = await newInstance({ name: 'batch observer', level: 8 });
    const below = await newInstance({ name: 'batch child', level: 5, parentInstanceId: observerId });
    const elsewhere = await newInstance({ name: 'batch elsewhere', level: 5 });
    const all = await register('/batch-all', { eventTypes: ['batch_probe'] });
    const scoped = await register('/batch-scoped', { eventTypes: ['batch_probe'], observerId });
    // 100 events of a sync batch, alternating between the two instances, one of another type.
    const inputs = Array.from({ length: 100 }, (_, i) => ({
      eventType: i === 7 ? 'batch_other' : 'batch_probe',
      eventText: `batch ${i}`,
      instanceId: i % 2 === 0 ? below : elsewhere,
    }));
    // Every statement the recording sends on its transaction's connection (pg-boss's included).
    let statements = 0;
    const counter: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => (statements++, args.result),
    };
    // A unit over the counted transaction (its after-commit work is not run: only counted).
    const events = await transaction(t.deps.db, async ({ trx }) =>
      t.deps.services.timeline.recordMany(
        new UnitOfWork(trx.withPlugin(counter), unitOfWorkRegistry(t.deps.db)),
        inputs,
      ),
    );
    // The instances' read, the events' insert, an observer chain and the endpoints (read once
    // after a change), the deliveries' insert with their jobs', the instances' lock and touch.
    // Two statements per delivery, one after the other, before.
    expect(statements).toBeLessThanOrEqual(9);

    const probes = events.filter((e) => e.eventType === 'batch_probe');
    const rows = await t.deps.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'webhook_id', 'event_id', 'body'])
      .where('webhook_id', 'in', [all.id, scoped.id])
      .execute();
    const of = (id: string) =>
      rows
        .filter((r) => r.webhook_id === id)
        .map((r) => r.event_id)
        .sort((a, b) => a! - b!);
    expect(of(all.id)).toEqual(probes.map((e) => e.id));
    expect(of(scoped.id)).toEqual(probes.filter((e) => e.instanceId === below).map((e) => e.id));
    const byEvent = new Map(probes.map((e) => [e.id, e]));
    for (const r of rows)
      expect(JSON.parse(r.body)).toEqual({
        type: 'batch_probe',
        timestamp: byEvent.get(r.event_id!)!.timelineAt,
        data: byEvent.get(r.event_id!),
      });
    // One job per delivery, with the queue's retry options, and an expiry a little longer than
    // one POST (WEBHOOK_TIMEOUT_MS, 10 s by default) so a node killed mid-delivery frees it soon.
    const jobs = await sql<{
      delivery_id: string;
      retry_limit: number;
      retry_delay: number;
      retry_backoff: boolean;
      expire_seconds: number;
    }>`
      select data->>'deliveryId' as delivery_id, retry_limit, retry_delay, retry_backoff, expire_seconds
      from ${sql.table(`${t.deps.jobs.schema}.job`)} where name = 'webhooks.deliver'
      and data->>'deliveryId' = any(${rows.map((r) => r.id)}::text[])`.execute(t.deps.db);
    expect(jobs.rows.map((j) => j.delivery_id).sort()).toEqual(rows.map((r) => r.id).sort());
    expect(
      new Set(
        jobs.rows.map((j) => `${j.retry_limit} ${j.retry_delay} ${j.retry_backoff} ${j.expire_seconds}`),
      ),
    ).toEqual(new Set(['1 1 true 40']));
    await eventually(() => expect(at('/batch-all')).toHaveLength(probes.length), { timeoutMs: 30_000 });
    await eventually(() => expect(at('/batch-scoped')).toHaveLength(rows.length - probes.length));
  });

  it('stops delivering to a disabled endpoint, signs with a rotated secret, forgets a deleted one', async () => {
    const hook = await register('/lifecycle', { eventTypes: ['lifecycle_probe'] });
    const record = () =>
      transaction(t.deps.db, (uow) => t.deps.services.timeline.record(uow, { eventType: 'lifecycle_probe' }));

    expect((await api('PATCH', `/api/admin/webhooks/${hook.id}`, { enabled: false })).body.enabled).toBe(
      false,
    );
    await record();
    expect(await deliveries(hook.id)).toEqual([]);
    expect((await api('POST', `/api/admin/webhooks/${hook.id}/test`)).status).toBe(409);

    await api('PATCH', `/api/admin/webhooks/${hook.id}`, { enabled: true });
    const rotated = await api('POST', `/api/admin/webhooks/${hook.id}/secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    await record();
    const [request] = await eventually(() => {
      const got = at('/lifecycle');
      expect(got).toHaveLength(1);
      return got;
    });
    expect(verify(rotated.body.secret, request!)).toBe(true);
    expect(verify(hook.secret, request!)).toBe(false);
    await eventually(async () => expect((await deliveries(hook.id))[0]?.status).toBe('succeeded'));

    expect((await api('DELETE', `/api/admin/webhooks/${hook.id}`)).status).toBe(204);
    expect((await api('GET', `/api/admin/webhooks/${hook.id}`)).status).toBe(404);
    await record();
    const left = await t.deps.db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('webhook_id', '=', hook.id)
      .execute();
    expect(left).toEqual([]);
  });
});
