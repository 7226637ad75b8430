// One workflow flow of the mix, as a person and an approver drive it (bench/workflows.ts drives the
// same flow back to back; here each step waits a second, as people do): created with one task,
// moved to triage, approved into execution (which starts an orchestrated run: one model call),
// the run awaited, evidence attached (→ integration), its artifact reviewed, approved
// (→ completed). The suggestions of the instance are read twice on the way. Every state-moving
// write is timed as `workflow.transition`; the others under their own names.
import type { Balancer } from './balancer.js';
import type { User } from './seed.js';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface FlowContext {
  lb: Balancer;
  adminToken: string;
  /** Instances created so far, with their creator: the suggestions op reads them too. */
  recent: { id: string; user: User }[];
  stopped: () => boolean;
}

export async function flow(c: FlowContext, user: User, n: number): Promise<void> {
  const { lb } = c;
  const token = user.token;
  const created = await lb.request('workflow.create', 'POST', '/api/protocol/instances', {
    token,
    expect: 201,
    body: {
      machineId: 'documentation_flow_v1',
      context: { title: `System bench ${n}`, tasks: [{ title: 'Docs', specialty: 'docs' }] },
    },
  });
  if (!created) return;
  const id: string = created.json.id;
  c.recent.push({ id, user });
  if (c.recent.length > 200) c.recent.shift();
  const base = `/api/protocol/instances/${id}`;
  await pause(1000);
  if (
    !(await lb.request('workflow.transition', 'POST', `${base}/transition`, {
      token,
      body: { targetState: 'triage' },
    }))
  )
    return;
  await lb.request('suggestions', 'GET', `/api/suggestions/${id}`, { token });
  await pause(1000);
  const exec = await lb.request('workflow.transition', 'POST', `${base}/approvals`, {
    token: c.adminToken,
    body: {},
  });
  const runId: string | undefined = exec?.json.instance?.activeRunId;
  if (!runId) return;
  // The run: one model call (first token + the reply's tokens), polled each second.
  const t0 = performance.now();
  for (;;) {
    await pause(1000);
    if (c.stopped()) return;
    const run = await lb.request('workflow.read', 'GET', `/api/protocol/runs/${runId}`, { token });
    if (!run) continue;
    if (run.json.status === 'completed') break;
    if (run.json.status === 'failed' || performance.now() - t0 > 60_000) {
      lb.stats.error('workflow.run', `run ${run.json.status}`);
      return;
    }
  }
  lb.stats.ok('workflow.run', performance.now() - t0);
  const ev = await lb.request('workflow.transition', 'POST', `${base}/evidence`, {
    token,
    body: { description: 'demo recorded', proofUrl: 'https://demo.invalid/' },
  });
  if (!ev) return;
  await pause(1000);
  const listed = await lb.request('workflow.read', 'GET', `${base}/artifacts`, { token });
  for (const a of (listed?.json.artifacts ?? []) as { id: string }[])
    await lb.request('workflow.review', 'POST', `/api/protocol/artifacts/${a.id}/review`, {
      token,
      body: { approve: true },
    });
  await lb.request('suggestions', 'GET', `/api/suggestions/${id}`, { token });
  await pause(1000);
  await lb.request('workflow.transition', 'POST', `${base}/approvals`, { token: c.adminToken, body: {} });
}
