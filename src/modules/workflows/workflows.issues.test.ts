// The issue tracker of collectArtifacts on a real server and database, against a local fake of
// GitHub's issues API (a node:http server answering as GitHub does): the issue filed once, with
// the right path, headers and body, its number and URL on the artifacts through the API; a 500
// retried into exactly one issue; a 401 failed at once, recorded, and logged without the token;
// without the configuration, no job and no call. The job queue is drained, never slept on.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';
import { ISSUE_JOB } from './index.js';
import { client } from './workflows.fixtures.js';

const TOKEN = 'ghp_fakeTokenForTheTrackerTest0123456789';

interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: any;
}

let github: Server;
let origin: string;
const received: Received[] = [];
/** Answers the fake gives next, in turn (then 201 with the next number). */
const script: { status: number; body: unknown }[] = [];
let nextNumber = 41;

let t: TestApp;
let bare: TestApp;
let admin: TestUser;
let creator: TestUser;
const logLines: string[] = [];

beforeAll(async () => {
  github = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      received.push({ method: req.method!, path: req.url!, headers: req.headers, body: JSON.parse(text) });
      const scripted = script.shift();
      const number = ++nextNumber;
      const answer = scripted ?? {
        status: 201,
        body: { id: 9000 + number, number, html_url: `https://github.com/acme/harbour/issues/${number}` },
      };
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    });
  });
  await new Promise<void>((ok) => github.listen(0, '127.0.0.1', ok));
  origin = `http://127.0.0.1:${(github.address() as AddressInfo).port}`;
  // Everything the app logs, at debug, to look for the token in.
  const log = pino({ level: 'debug' }, { write: (line: string) => void logLines.push(line) });
  t = await createTestApp(
    {
      ISSUE_TRACKER_TOKEN: TOKEN,
      ISSUE_TRACKER_REPO: 'acme/harbour',
      ISSUE_TRACKER_API_URL: `${origin}/`,
      ISSUE_TRACKER_MAX_ATTEMPTS: '3',
      ISSUE_TRACKER_RETRY_DELAY: '1',
    },
    { log },
  );
  bare = await createTestApp();
  // No orchestrator runs on entering execution: the artifacts are made through the seams.
  for (const app of [t, bare]) app.deps.services.workflows.usePorts({ runExecutor: undefined });
  admin = await createUser(t, 'cso');
  creator = await createUser(t, 'public');
});
afterAll(async () => {
  await Promise.all([t.close(), bare.close()]);
  github.closeAllConnections();
  await new Promise((ok) => github.close(ok));
});

/** An instance in `execution` with two ready artifacts, then evidence: it enters `integration`,
 * whose collectArtifacts runs. Answers with the instance id, the artifacts and the event. */
async function collect(app: TestApp, summaries = ['Outline of the guide', 'Ping @octocat for review']) {
  const who =
    app === t
      ? { admin, creator }
      : { admin: await createUser(app, 'cso'), creator: await createUser(app, 'public') };
  const c = client(app);
  const instance = await c.create(who.creator, {
    machineId: 'documentation_flow_v1',
    context: { title: 'Harbour guide' },
  });
  expect((await c.transition(who.creator, instance.id, 'triage')).status).toBe(200);
  expect((await c.approve(who.admin, instance.id)).body.advanced).toMatchObject({ to: 'execution' });
  const work = app.deps.services.workflowTasks;
  const artifacts = [];
  for (const summary of summaries) {
    const draft = await work.createDraftArtifact(app.deps.db, {
      instanceId: instance.id,
      taskId: null,
      personaId: null,
      summary,
    });
    artifacts.push(await work.markArtifactReady(app.deps.db, draft.id, `content of ${summary}`));
  }
  const ev = await c.evidence(who.creator, instance.id, {
    description: 'demo',
    proofUrl: 'https://ci.example.invalid/1',
  });
  expect(ev.body.advanced, ev.text).toMatchObject({ to: 'integration' });
  const events = (
    await c.call(who.creator, 'GET', `/api/protocol/instances/${instance.id}/timeline?limit=100`)
  ).body.events;
  const collected = events.find((e: any) => e.eventType === 'workflow_artifacts_collected');
  return { id: instance.id as string, artifacts, collected, c, who };
}

const issueRow = (app: TestApp, id: string) =>
  app.deps.db.selectFrom('workflow_issues').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

describe('with a tracker configured', () => {
  it('files one issue with the path, headers and body GitHub expects; the artifacts show it', async () => {
    const before = received.length;
    const { id, artifacts, collected, c } = await collect(t);
    expect(collected.metadata.issue).toEqual({ id: expect.any(String), status: 'pending' });
    await t.deps.jobs.drain();

    const calls = received.slice(before);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call).toMatchObject({ method: 'POST', path: '/repos/acme/harbour/issues' });
    expect(call!.headers).toMatchObject({
      authorization: `Bearer ${TOKEN}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'content-type': 'application/json',
    });
    expect(call!.headers['user-agent']).toBeTruthy();
    expect(Object.keys(call!.body).sort()).toEqual(['body', 'title']);
    expect(call!.body.title).toBe('Artifacts of workflow "Harbour guide" at integration (2)');
    const body: string = call!.body.body;
    expect(body).toContain(`Workflow instance \`${id}\` (\`documentation_flow_v1\`) entered \`integration\``);
    expect(body).toContain(`${t.deps.config.publicUrl}/api/protocol/instances/${id}`);
    for (const a of artifacts)
      expect(body).toContain(`${t.deps.config.publicUrl}/api/protocol/artifacts/${a.id}`);
    expect(body).toContain('Outline of the guide (review: pending)');
    // A summary's @mention would notify that GitHub user: it is quoted without one.
    expect(body).not.toContain('@octocat');
    expect(body).toContain('@\u200boctocat');

    const number = nextNumber;
    const issue = { number, url: `https://github.com/acme/harbour/issues/${number}` };
    const list = await c.call(creator, 'GET', `/api/protocol/instances/${id}/artifacts`);
    expect(list.body.artifacts.map((a: any) => a.issue)).toEqual([issue, issue]);
    const one = await c.call(creator, 'GET', `/api/protocol/artifacts/${artifacts[0]!.id}`);
    expect(one.body).toMatchObject({ id: artifacts[0]!.id, issue });
    expect(await issueRow(t, collected.metadata.issue.id)).toMatchObject({
      status: 'created',
      attempts: 1,
      number,
      url: issue.url,
      last_error: null,
    });

    // The job run again (a redelivery) reads the recorded issue and files no second one.
    await t.deps.jobs.enqueue(t.deps.db, ISSUE_JOB, { issueId: collected.metadata.issue.id });
    await t.deps.jobs.drain();
    expect(received.length - before).toBe(1);
  });

  it('retries a 500 and files exactly one issue', async () => {
    const before = received.length;
    script.push({ status: 500, body: { message: 'Server Error' } });
    const { id, collected, c } = await collect(t);
    await t.deps.jobs.drain();
    expect(received.length - before).toBe(2);
    const row = await issueRow(t, collected.metadata.issue.id);
    expect(row).toMatchObject({ status: 'created', attempts: 2, number: nextNumber, last_error: null });
    const list = await c.call(creator, 'GET', `/api/protocol/instances/${id}/artifacts`);
    expect(list.body.artifacts.every((a: any) => a.issue?.number === nextNumber)).toBe(true);
  });

  it('fails a 401 at once, records why, and never logs or answers the token', async () => {
    const before = received.length;
    script.push({
      status: 401,
      body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
    });
    const { id, artifacts, collected, c } = await collect(t);
    await t.deps.jobs.drain();
    expect(received.length - before).toBe(1);
    expect(await issueRow(t, collected.metadata.issue.id)).toMatchObject({
      status: 'failed',
      attempts: 1,
      number: null,
      url: null,
      last_error: 'answered 401: Bad credentials',
    });
    const list = await c.call(creator, 'GET', `/api/protocol/instances/${id}/artifacts`);
    expect(list.body.artifacts.map((a: any) => a.issue)).toEqual([null, null]);

    const failed = logLines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'workflow issue failed');
    expect(failed).toContainEqual(
      expect.objectContaining({
        level: 40,
        issueId: collected.metadata.issue.id,
        repo: 'acme/harbour',
        status: 401,
        error: 'answered 401: Bad credentials',
      }),
    );
    expect(logLines.join('\n')).not.toContain(TOKEN);
    // Nor in what the API answers about the instance, its artifacts or the service.
    for (const path of [
      `/api/protocol/instances/${id}`,
      `/api/protocol/instances/${id}/artifacts`,
      `/api/protocol/artifacts/${artifacts[0]!.id}`,
      `/api/protocol/instances/${id}/timeline?limit=100`,
      '/api/admin/health',
    ])
      expect((await c.call(admin, 'GET', path)).text).not.toContain(TOKEN);
  });
});

describe('without a tracker', () => {
  it('records issue: null and neither enqueues nor calls anything', async () => {
    const before = received.length;
    const { id, collected, c, who } = await collect(bare);
    expect(collected.metadata.issue).toBeNull();
    await bare.deps.jobs.drain();
    expect(received.length).toBe(before);
    const list = await c.call(who.creator, 'GET', `/api/protocol/instances/${id}/artifacts`);
    expect(list.body.artifacts.map((a: any) => a.issue)).toEqual([null, null]);
    expect(await bare.deps.db.selectFrom('workflow_issues').selectAll().execute()).toEqual([]);
    expect((await bare.deps.jobs.status()).queues.map((q) => q.name)).not.toContain(ISSUE_JOB);
  });
});
