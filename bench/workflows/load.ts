// The workflows bench's load generator, run in a worker thread (bench/workflows.ts starts it):
// the OpenAI-compatible model server, answering at once, and the HTTP clients that drive each
// documentation flow through the service, timing every request.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';
import { io } from 'socket.io-client';
import { startFakeModelServer } from '../../test/fake-model-server.js';
import { pct } from '../percentile.js';
import { answerCommands } from '../worker-commands.js';

/** What the flows are run with: the bench's options, and the service to drive. */
export interface FlowCommand {
  cmd: 'flow';
  /** How many flows in all, how many at a time, and a request's mean think time before it. */
  instances: number;
  parallel: number;
  thinkMs: number;
  url: string;
  tokens: string[];
  adminToken: string;
  rootObserverId: number;
}
export type Command = FlowCommand | { cmd: 'close' };

async function loadGenerator() {
  const fake = await startFakeModelServer();
  answerCommands<Command>(fake.env(), async (m) => (m.cmd === 'close' ? fake.close() : flows(m)));
}

export async function flows(c: FlowCommand) {
  const times: Record<string, number[]> = {};
  let failures = 0;
  let transitions = 0;
  // Runs end as `workflow_run_finished` timeline events on the root observer's room.
  const finished = new Map<string, () => void>();
  const ended = new Set<string>();
  const observer = io(`${c.url}/observer`, {
    transports: ['websocket'],
    auth: { token: c.adminToken, observerId: c.rootObserverId },
  });
  observer.on('timeline_update', (e: { eventType: string; metadata: { runId?: string } }) => {
    if (e.eventType !== 'workflow_run_finished' || !e.metadata.runId) return;
    ended.add(e.metadata.runId);
    finished.get(e.metadata.runId)?.();
  });
  await new Promise<void>((ok, fail) => {
    observer.once('connect', ok);
    observer.once('connect_error', fail);
  });
  const runFinished = (runId: string) =>
    ended.has(runId) ? Promise.resolve() : new Promise<void>((ok) => finished.set(runId, ok));
  let requests = 0;
  const call = async (kind: string, token: string, method: string, path: string, body?: unknown) => {
    if (c.thinkMs > 0) await new Promise((r) => setTimeout(r, Math.random() * 2 * c.thinkMs));
    requests++;
    const t0 = performance.now();
    const res = await fetch(c.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json: any = await res.json();
    (times[kind] ??= []).push(performance.now() - t0);
    if (res.status >= 400) throw new Error(`${kind}: ${res.status} ${json.code} ${json.detail}`);
    return json;
  };
  const one = async (n: number) => {
    const token = c.tokens[n % c.tokens.length]!;
    const i = await call('create', token, 'POST', '/api/protocol/instances', {
      machineId: 'documentation_flow_v1',
      context: {
        title: `Bench ${n}`,
        tasks: [
          { title: 'Docs', specialty: 'docs' },
          { title: 'Code', specialty: 'code' },
          { title: 'Tests', specialty: 'tests' },
        ],
      },
    });
    await call('transition', token, 'POST', `/api/protocol/instances/${i.id}/transition`, {
      targetState: 'triage',
    });
    const exec = await call(
      'approve → execution',
      c.adminToken,
      'POST',
      `/api/protocol/instances/${i.id}/approvals`,
      {},
    );
    transitions += 2;
    const runId = exec.instance.activeRunId;
    await runFinished(runId);
    const run = await call('getRun', token, 'GET', `/api/protocol/runs/${runId}`);
    if (run.status !== 'completed') throw new Error(`run ${runId} ended ${run.status}`);
    const ev = await call(
      'evidence → integration',
      token,
      'POST',
      `/api/protocol/instances/${i.id}/evidence`,
      {
        description: 'demo',
        proofUrl: 'https://demo.invalid/',
      },
    );
    if (ev.advanced) transitions++;
    const { artifacts } = await call(
      'listArtifacts',
      token,
      'GET',
      `/api/protocol/instances/${i.id}/artifacts`,
    );
    for (const a of artifacts)
      await call('review', token, 'POST', `/api/protocol/artifacts/${a.id}/review`, { approve: true });
    const done = await call(
      'approve → completed',
      c.adminToken,
      'POST',
      `/api/protocol/instances/${i.id}/approvals`,
      {},
    );
    if (done.instance.state === 'completed') transitions++;
  };
  // The load generator's own event-loop delay: it is part of each request's measured time.
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(c.parallel, c.instances) }, async () => {
      for (let n = next++; n < c.instances; n = next++)
        await one(n).catch((err: unknown) => {
          failures++;
          if (failures <= 3) process.stderr.write(`flow ${n} failed: ${String(err)}\n`);
        });
    }),
  );
  const wallSec = (performance.now() - started) / 1000;
  loop.disable();
  observer.close();
  // Every request that moves the instance to its next state (each of these does, in this flow).
  times['every transition'] = [
    'transition',
    'approve → execution',
    'evidence → integration',
    'approve → completed',
  ].flatMap((k) => times[k] ?? []);
  const summary = Object.fromEntries(
    Object.entries(times).map(([k, xs]) => [k, { n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99) }]),
  );
  const clientLoop = { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6 };
  return { wallSec, transitions, requests, failures, summary, clientLoop };
}

if (!isMainThread) await loadGenerator();
