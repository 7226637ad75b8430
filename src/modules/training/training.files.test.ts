// Training on documents, on the real server and database, the model behind the fake model server
// (contract: "Training (admin)", ingest-file): real TXT, PDF and DOCX files; the synthesis calls,
// their grouping, the "I " rule and deduplication; the job record and its `trainingProgress`
// events in order; the refusals (413, 415, 400); a model failure that leaves no memory; a job run
// twice that stores once; offline extraction; and a job that survives a restart of its worker.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../../test/fake-model-server.js';
import {
  closeSockets,
  connectSocket,
  createRestartableApp,
  createTestApp,
  createUser,
  eventually,
  type TestApp,
  type TestUser,
} from '../../../test/harness.js';
import { chunkText } from '../memory/index.js';
import { buildDocx, buildPdf, buildTextPng, postForm, sentences } from './training.fixtures.js';
import { groupsOf, normaliseText, SYNTHESIS_CHUNK_CHARS } from './training.rules.js';

const FILE_LIMIT = 300 * 1024;
let fake: FakeModelServer;
let t: TestApp;
let admin: TestUser;
let otherAdmin: TestUser;
let npcId: number;

beforeAll(async () => {
  fake = await startFakeModelServer();
  t = await createTestApp(
    fake.env({ MODEL_MAX_RETRIES: '0', TRAINING_FILE_LIMIT: String(FILE_LIMIT), TRAINING_MAX_PAGES: '3' }),
  );
  [admin, otherAdmin] = await Promise.all([createUser(t, 'cso'), createUser(t, 'developer')]);
  npcId = (await t.deps.services.characters.createNpc({ name: 'Mara', description: 'the lighthouse keeper' }))
    .id;
});
afterAll(async () => {
  closeSockets();
  await t.close();
  await fake.close();
});

const ingest = (
  app: TestApp,
  token: string,
  file: { name: string; data: Buffer },
  fields: Record<string, string> = {},
) => postForm(app, '/api/training/ingest-file', token, { npcUserId: String(npcId), ...fields }, [file]);

async function finished(app: TestApp, jobId: string, timeoutMs = 30_000) {
  return eventually(
    async () => {
      const r = await app.api('GET', `/api/training/jobs/${jobId}`, { token: admin.accessToken });
      expect(['completed', 'failed']).toContain(r.body.status);
      return r.body;
    },
    { timeoutMs },
  );
}

async function beliefsOf(app: TestApp, jobId: string) {
  const r = await app.api('GET', `/api/admin/memories?userId=${npcId}&source=core_belief&limit=100`, {
    token: admin.accessToken,
  });
  return r.body.memories
    .filter((m: any) => m.metadata.trainingJobId === jobId)
    .sort((a: any, b: any) => a.id - b.id);
}

describe('synthesis', () => {
  it('one call per four chunks, one belief a line, the "I " rule, deduplication; events in order', async () => {
    fake.reset();
    const text = sentences(300).join(' ');
    const groups = groupsOf(chunkText(normaliseText(text), SYNTHESIS_CHUNK_CHARS, 0));
    expect(groups.length).toBe(2);
    fake.replyChat({
      text: 'I love the sea.\nThe tide is high.\n- I LOVE THE SEA.\n\n2. I keep the lamp lit.',
    });
    fake.replyChat({ text: 'i love   the sea.\nI count the ships.' });

    const socket = await connectSocket(t.url, { auth: { token: admin.accessToken } });
    const other = await connectSocket(t.url, { auth: { token: otherAdmin.accessToken } });
    const r = await ingest(
      t,
      admin.accessToken,
      { name: 'notes.txt', data: Buffer.from(text) },
      { title: 'Log' },
    );
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.body).toEqual({ jobId: expect.any(String), status: 'queued' });
    expect(r.headers.get('location')).toBe(`/api/training/jobs/${r.body.jobId}`);
    const jobId = r.body.jobId;

    await socket.next('trainingProgress', { match: (p) => p.jobId === jobId && p.status === 'completed' });
    const job = await finished(t, jobId);
    expect(job).toMatchObject({
      id: jobId,
      kind: 'ingest_file',
      npcUserId: npcId,
      fileName: 'notes.txt',
      mimeType: 'text/plain',
      status: 'completed',
      stage: 'done',
      progress: 1,
      truncated: false,
      offline: false,
      error: null,
    });

    // The calls: one per group, its chunks in the prompt.
    const calls = fake.chatRequests();
    expect(calls).toHaveLength(2);
    for (const [i, call] of calls.entries()) {
      const system = call.body.messages.find((m: any) => m.role === 'system').content;
      const user = call.body.messages.find((m: any) => m.role === 'user').content;
      expect(system).toContain('Mara');
      expect(system).toContain('first person');
      expect(user).toContain('Document: Log');
      expect(user).toContain(`Excerpt ${groups[i]!.length} of ${groups[i]!.length}`);
      for (const chunk of groups[i]!) expect(user).toContain(chunk);
    }
    await t.deps.models.flush();
    const purposes = await t.deps.db
      .selectFrom('model_calls')
      .select('purpose')
      .where('purpose', '=', 'training.synthesis')
      .execute();
    expect(purposes).toHaveLength(2);

    // The beliefs: "I " kept, others prefixed, duplicates (any case, any spacing) dropped.
    const beliefs = await beliefsOf(t, jobId);
    expect(beliefs.map((b: any) => [b.content, b.metadata.group])).toEqual([
      ['I love the sea.', 1],
      ['I believe: The tide is high.', 1],
      ['I keep the lamp lit.', 1],
      ['I believe: i love   the sea.', 2],
      ['I count the ships.', 2],
    ]);
    for (const b of beliefs) {
      expect(b).toMatchObject({ source: 'core_belief', tier: 'assistant_core', userId: npcId });
      expect(b.metadata).toEqual({ trainingJobId: jobId, fileName: 'notes.txt', group: b.metadata.group });
    }
    expect(job.memoryIds).toEqual(beliefs.map((b: any) => b.id));

    // The events, in order, to the admin who started the job only.
    const events = socket.events.filter((e) => e.name === 'trainingProgress' && e.payload.jobId === jobId);
    const steps = events.map((e) => `${e.payload.status}/${e.payload.stage}/${e.payload.progress}`);
    expect(steps).toEqual([
      'queued/queued/0',
      'running/extracting/0.05',
      'running/synthesising/0.1',
      'running/synthesising/0.5',
      'running/synthesising/0.9',
      'running/storing/0.95',
      'completed/done/1',
    ]);
    expect(events.at(-1)!.payload).toEqual({
      jobId,
      kind: 'ingest_file',
      status: 'completed',
      stage: 'done',
      progress: 1,
      memoryIds: job.memoryIds,
    });
    expect(other.events.filter((e) => e.name === 'trainingProgress')).toEqual([]);

    // The list, newest first.
    const list = await t.api('GET', '/api/training/jobs?status=completed', { token: admin.accessToken });
    expect(list.body.jobs[0].id).toBe(jobId);
  });

  it('a job run a second time stores nothing again', async () => {
    fake.reset();
    fake.replyChat({ text: 'I log the weather.' });
    const r = await ingest(t, admin.accessToken, {
      name: 'once.txt',
      data: Buffer.from('Every dawn I log the weather.'),
    });
    const job = await finished(t, r.body.jobId);
    expect(job.memoryIds).toHaveLength(1);
    await t.deps.jobs.enqueue(t.deps.db, 'training.ingest', { jobId: r.body.jobId });
    await t.deps.jobs.drain(30_000);
    expect((await beliefsOf(t, r.body.jobId)).map((b: any) => b.id)).toEqual(job.memoryIds);
    expect(fake.chatRequests()).toHaveLength(1);
  });

  it('a one-page PDF and a DOCX', async () => {
    fake.reset();
    fake.replyChat({
      text: 'I trust the lamp.',
      when: (b) => JSON.stringify(b).includes('lamp has never failed'),
    });
    fake.replyChat({
      text: 'I sing at night.',
      when: (b) => JSON.stringify(b).includes('sings to the gulls'),
    });
    const pdf = await buildPdf([['The lamp has never failed in forty years.', 'Ships pass safely.']]);
    const docx = await buildDocx(['Mara sings to the gulls at night.', 'Élève du phare, elle chante.']);
    const [a, b] = await Promise.all([
      ingest(t, admin.accessToken, { name: 'lamp.pdf', data: pdf }),
      ingest(t, admin.accessToken, { name: 'songs.docx', data: docx }),
    ]);
    expect([a.status, b.status]).toEqual([202, 202]);
    const [ja, jb] = [await finished(t, a.body.jobId), await finished(t, b.body.jobId)];
    expect(ja).toMatchObject({ status: 'completed', mimeType: 'application/pdf' });
    expect(jb).toMatchObject({
      status: 'completed',
      mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    });
    expect((await beliefsOf(t, a.body.jobId)).map((m: any) => m.content)).toEqual(['I trust the lamp.']);
    expect((await beliefsOf(t, b.body.jobId)).map((m: any) => m.content)).toEqual(['I sing at night.']);
    const docxPrompt = fake.chatRequests().find((c) => JSON.stringify(c.body).includes('gulls'))!;
    expect(JSON.stringify(docxPrompt.body)).toContain('Élève du phare');
  });

  it('a model failure mid-job fails the job with model_unavailable and leaves no memory', async () => {
    fake.reset();
    const text = sentences(300, 'The keeper').join(' ');
    fake.replyChat({ text: 'I remember the first group.' });
    fake.failNext('chat', { status: 500, when: (b) => JSON.stringify(b).includes('number 300 watches') });
    const r = await ingest(t, admin.accessToken, { name: 'fails.txt', data: Buffer.from(text) });
    const job = await finished(t, r.body.jobId);
    expect(job).toMatchObject({ status: 'failed', stage: 'synthesising', memoryIds: [] });
    expect(job.error).toMatchObject({ code: 'model_unavailable', status: 503 });
    expect(fake.chatRequests()).toHaveLength(2);
    expect(await beliefsOf(t, r.body.jobId)).toEqual([]);
  });

  it('a PDF without text fails with validation_failed', async () => {
    const r = await ingest(t, admin.accessToken, { name: 'blank.pdf', data: await buildPdf([[]]) });
    expect(r.status).toBe(202);
    const job = await finished(t, r.body.jobId);
    expect(job).toMatchObject({ status: 'failed', memoryIds: [] });
    expect(job.error).toMatchObject({ code: 'validation_failed' });
  });
});

describe('refusals', () => {
  it('413 over the size limit (limit) and over the page limit (maxPages)', async () => {
    const big = await ingest(t, admin.accessToken, {
      name: 'big.txt',
      data: Buffer.alloc(FILE_LIMIT + 1, 'a'),
    });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'payload_too_large', limit: FILE_LIMIT });
    const pdf = await buildPdf([['one'], ['two'], ['three'], ['four']]);
    const pages = await ingest(t, admin.accessToken, { name: 'long.pdf', data: pdf });
    expect(pages.status).toBe(413);
    expect(pages.body).toMatchObject({ code: 'payload_too_large', maxPages: 3, pages: 4 });
  });

  it('415 for another type; 400 for a file that cannot be opened as its type', async () => {
    const png = await ingest(t, admin.accessToken, { name: 'x.png', data: buildTextPng(['hi']) });
    expect(png.status).toBe(415);
    expect(png.body.code).toBe('unsupported_media_type');
    const pdf = await buildPdf([['A fine page.']]);
    const broken = Buffer.concat([pdf.subarray(0, 20), Buffer.from('garbage'.repeat(50))]);
    const badPdf = await ingest(t, admin.accessToken, { name: 'broken.pdf', data: broken });
    expect(badPdf.status, JSON.stringify(badPdf.body)).toBe(400);
    expect(badPdf.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'body.file' }] });
    const docx = await buildDocx(['Hello there.']);
    const badDocx = await ingest(t, admin.accessToken, {
      name: 'cut.docx',
      data: docx.subarray(0, docx.length - 200),
    });
    expect([400, 415]).toContain(badDocx.status);
  });

  it('400 without a file, without npcUserId, for a non-character; nothing queued', async () => {
    const before = (await t.api('GET', '/api/training/jobs?limit=100', { token: admin.accessToken })).body
      .jobs.length;
    const noFile = await postForm(
      t,
      '/api/training/ingest-file',
      admin.accessToken,
      { npcUserId: String(npcId) },
      [],
    );
    expect(noFile.status).toBe(400);
    expect(noFile.body.errors[0].path).toBe('body.file');
    const noNpc = await postForm(t, '/api/training/ingest-file', admin.accessToken, {}, [
      { name: 'a.txt', data: Buffer.from('Hello world.') },
    ]);
    expect(noNpc.status).toBe(400);
    expect(noNpc.body.errors[0].path).toBe('body.npcUserId');
    const player = await createUser(t, 'public');
    const notNpc = await postForm(
      t,
      '/api/training/ingest-file',
      admin.accessToken,
      { npcUserId: String(player.id) },
      [{ name: 'a.txt', data: Buffer.from('Hello world.') }],
    );
    expect(notNpc.status).toBe(400);
    expect(notNpc.body.errors[0].path).toBe('body.npcUserId');
    const twoFiles = await postForm(
      t,
      '/api/training/ingest-file',
      admin.accessToken,
      { npcUserId: String(npcId) },
      [
        { name: 'a.txt', data: Buffer.from('Hello world.') },
        { name: 'b.txt', data: Buffer.from('Hello again.') },
      ],
    );
    expect(twoFiles.status).toBe(400);
    const forbidden = await postForm(
      t,
      '/api/training/ingest-file',
      player.accessToken,
      { npcUserId: String(npcId) },
      [{ name: 'a.txt', data: Buffer.from('Hello world.') }],
    );
    expect(forbidden.status).toBe(403);
    const after = (await t.api('GET', '/api/training/jobs?limit=100', { token: admin.accessToken })).body.jobs
      .length;
    expect(after).toBe(before);
  });
});

describe('offline', () => {
  it('sentences of four words or more become beliefs; offline and truncated recorded', async () => {
    const off = await createTestApp({ TRAINING_MAX_CHARS: '95' });
    try {
      const a = await createUser(off, 'cso');
      const npc = await off.deps.services.characters.createNpc({ name: 'Olek', description: '' });
      const text =
        'Too short. I keep the light burning.\n\nThe   sea was rough that night! Later sentences are cut off here.';
      const r = await postForm(
        off,
        '/api/training/ingest-file',
        a.accessToken,
        { npcUserId: String(npc.id) },
        [{ name: 'log.md', data: Buffer.from(text) }],
      );
      expect(r.status).toBe(202);
      const job = await eventually(
        async () => {
          const j = await off.api('GET', `/api/training/jobs/${r.body.jobId}`, { token: a.accessToken });
          expect(j.body.status).toBe('completed');
          return j.body;
        },
        { timeoutMs: 30_000 },
      );
      expect(job).toMatchObject({ offline: true, truncated: true });
      const memories = (
        await off.api('GET', `/api/admin/memories?userId=${npc.id}&source=core_belief`, {
          token: a.accessToken,
        })
      ).body.memories;
      expect(memories.map((m: any) => m.content).sort()).toEqual([
        'I believe: Later sentences are cut off',
        'I believe: The sea was rough that night!',
        'I keep the light burning.',
      ]);
    } finally {
      await off.close();
    }
  });
});

describe('restart', () => {
  // Two starts of the service (the first loads a migrated tarball) and waits of up to 60 s
  // inside: the failsafe covers them on a busy machine; nothing is timed.
  it(
    'a job interrupted by its worker stopping is retried by the next one and stores its beliefs once',
    { timeout: 120_000 },
    async () => {
      fake.reset();
      const apps = await createRestartableApp(fake.env({ MODEL_MAX_RETRIES: '0' }));
      try {
        const first = apps.first;
        const a = await createUser(first, 'cso');
        const npc = await first.deps.services.characters.createNpc({ name: 'Ilse', description: '' });
        // The first call hangs until its worker stops; the retry's call answers.
        fake.replyChat({ text: 'I never answer.', delayMs: 60_000 });
        fake.replyChat({ text: 'I survive restarts.\nI survive restarts.' });
        const r = await postForm(
          first,
          '/api/training/ingest-file',
          a.accessToken,
          { npcUserId: String(npc.id) },
          [{ name: 'r.txt', data: Buffer.from('The keeper writes everything down.') }],
        );
        expect(r.status).toBe(202);
        await eventually(() => fake.chatRequests().length === 1, { timeoutMs: 30_000 });

        const app = await apps.restart();
        const job = await eventually(
          async () => {
            const j = await app.api('GET', `/api/training/jobs/${r.body.jobId}`, { token: a.accessToken });
            expect(j.body.status).toBe('completed');
            return j.body;
          },
          { timeoutMs: 60_000 },
        );
        expect(fake.chatRequests()).toHaveLength(2);
        const memories = (
          await app.api('GET', `/api/admin/memories?userId=${npc.id}&source=core_belief`, {
            token: a.accessToken,
          })
        ).body.memories;
        expect(memories.map((m: any) => [m.id, m.content])).toEqual([
          [job.memoryIds[0], 'I survive restarts.'],
        ]);
      } finally {
        await apps.close();
      }
    },
  );
});
