/* eslint-disable @typescript-eslint/no-explicit-any -- a test helper: it reads untyped JSON bodies, as the tests do */
// What the orchestrator's tests share: a real server and database whose model calls go to the
// fake model server through a local HTTP relay that counts the calls in flight, can hold a task's
// calls until the test lets them go, and refuses the calls of a task marked to fail; three NPC
// specialists; and helpers to start runs and wait for them. A test file calls
// `useOrchestratorApp()` once; the bindings below are set before its tests run.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import { createTestApp, createUser, eventually, type TestApp, type TestUser } from '../../../test/harness.js';
import { client } from './workflows.fixtures.js';

const TASK_MARK = 'Write the artifact this task asks for';

/** A relay in front of the fake model server: counts task calls in flight (and the most at once),
 * holds task calls whose prompt matches `hold` until `release()`, answers 400 to those whose
 * prompt holds `failMark`, and keeps the prompts of the task calls it answered (a call its client
 * gave up on first is not answered). */
export async function startRelay(target: string) {
  const state = {
    inFlight: 0,
    maxInFlight: 0,
    taskCalls: [] as string[],
    answered: [] as string[],
    hold: null as RegExp | null,
    failMark: 'FAIL-ME',
    waiting: [] as (() => void)[],
  };
  const read = (req: IncomingMessage) =>
    new Promise<string>((ok) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
    });
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await read(req);
      const prompt = (JSON.parse(body).messages ?? []).map((m: any) => String(m.content)).join('\n');
      const isTask = prompt.includes(TASK_MARK);
      if (isTask) {
        state.taskCalls.push(prompt);
        state.inFlight++;
        state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
      }
      let gone = false;
      res.on('close', () => {
        if (isTask && !gone) state.inFlight--;
        gone = true;
      });
      try {
        while (isTask && state.hold?.test(prompt)) await new Promise<void>((ok) => state.waiting.push(ok));
        if (res.destroyed) return;
        if (isTask && prompt.includes(state.failMark)) {
          res.writeHead(400, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: { message: 'refused by the relay' } }));
          return;
        }
        const upstream = await fetch(target + (req.url ?? ''), {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: req.headers.authorization ?? '' },
          body,
        });
        res.writeHead(upstream.status, {
          'content-type': upstream.headers.get('content-type') ?? 'application/json',
        });
        const answer = Buffer.from(await upstream.arrayBuffer());
        if (res.destroyed) return;
        res.end(answer);
        if (isTask) state.answered.push(prompt);
      } catch {
        res.destroy();
      }
    })();
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    url: origin,
    release() {
      state.hold = null;
      for (const w of state.waiting.splice(0)) w();
    },
    calls: (re: RegExp) => state.taskCalls.filter((p) => re.test(p)).length,
    answered: (re: RegExp) => state.answered.filter((p) => re.test(p)).length,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
export type Relay = Awaited<ReturnType<typeof startRelay>>;

/** The fake's origin (its url ends in /v1; the relay forwards the path it is asked). */
export const originOf = (fake: FakeModelServer) => fake.url.replace(/\/v1$/, '');
export const relayEnv = (fake: FakeModelServer, relay: Relay, extra: Record<string, string> = {}) =>
  fake.env({ MODEL_BASE_URL: `${relay.url}/v1`, MODEL_MAX_RETRIES: '0', ...extra });

export let fake: FakeModelServer;
export let relay: Relay;
export let t: TestApp;
export let admin: TestUser;
export let creator: TestUser;
export let stranger: TestUser;
export let c: ReturnType<typeof client>;
export const npcs: Record<string, number> = {};

/** The app, relay, users and NPCs of one test file, made before its tests and closed after. */
export function useOrchestratorApp(): void {
  beforeAll(async () => {
    fake = await startFakeModelServer();
    relay = await startRelay(originOf(fake));
    t = await createTestApp(relayEnv(fake, relay));
    admin = await createUser(t, 'cso');
    creator = await createUser(t, 'public');
    stranger = await createUser(t, 'public');
    c = client(t);
    // Created in this order, so ids ascend: coderA < coderB < writer.
    for (const [name, specialties] of [
      ['coderA', ['code', 'tests']],
      ['coderB', ['code']],
      ['writer', ['docs']],
    ] as const) {
      const npc = await t.deps.services.characters.createNpc({
        name,
        description: `${name} the specialist`,
        metadata: { specialties: [...specialties] },
      });
      npcs[name] = npc.id;
    }
  });
  afterAll(async () => {
    relay.release();
    await t.close();
    await relay.close();
    await fake.close();
  });
}

export const orchestrate = (user: TestUser, id: string, body?: Record<string, unknown>) =>
  c.call(user, 'POST', `/api/protocol/instances/${id}/orchestrate`, body ?? {});
export const runOf = (user: TestUser, runId: string) => c.call(user, 'GET', `/api/protocol/runs/${runId}`);
export async function finished(user: TestUser, runId: string, app: TestApp = t) {
  return eventually(
    async () => {
      const r = await app.api('GET', `/api/protocol/runs/${runId}`, { token: user.accessToken });
      expect(r.body.status).toMatch(/completed|failed/);
      return r.body;
    },
    { timeoutMs: 30_000 },
  );
}
export const tasksOf = async (id: string, app: TestApp = t) =>
  (await app.api('GET', `/api/protocol/instances/${id}/tasks`, { token: creator.accessToken })).body.tasks;
export const artifactsOf = async (id: string, app: TestApp = t) =>
  (await app.api('GET', `/api/protocol/instances/${id}/artifacts`, { token: creator.accessToken })).body
    .artifacts;
export const events = async (id: string) =>
  (await c.call(creator, 'GET', `/api/protocol/instances/${id}/timeline?limit=200`)).body.events as any[];
