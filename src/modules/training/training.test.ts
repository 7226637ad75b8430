// Training texts on the real server and database (contract: "Training (admin)"): verbatim
// ingestion, texts learnt by heart reassembled byte for byte, and who may call (admins only; the
// NPC must be a character).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, type TestApp, type TestUser } from '../../../test/harness.js';

let t: TestApp;
let admin: TestUser;
let developer: TestUser;
let player: TestUser;
let npcId: number;

beforeAll(async () => {
  t = await createTestApp({ MEMORY_MAX_CONTENT: '4096' });
  [admin, developer, player] = await Promise.all([
    createUser(t, 'cso'),
    createUser(t, 'developer'),
    createUser(t, 'public'),
  ]);
  npcId = (await t.deps.services.characters.createNpc({ name: 'Mara', description: 'the lighthouse keeper' }))
    .id;
});
afterAll(() => t.close());

const memory = async (id: number) =>
  (
    await t.api('GET', `/api/admin/memories?userId=${npcId}&limit=200`, { token: admin.accessToken })
  ).body.memories.find((m: any) => m.id === id);

describe('ingest-text', () => {
  it('stores the text verbatim as manual_ingestion_text memories of the NPC, split at paragraph ends', async () => {
    const paragraphs = Array.from(
      { length: 12 },
      (_, i) => `Paragraph ${i}: ` + 'The lamp must be trimmed before dusk. '.repeat(12),
    );
    const text = paragraphs.join('\n\n');
    const r = await t.api('POST', '/api/training/ingest-text', {
      token: admin.accessToken,
      body: { npcUserId: npcId, text, title: 'Duties' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ npcUserId: npcId, source: 'manual_ingestion_text' });
    expect(r.body.memoryIds.length).toBeGreaterThan(1);
    const contents: string[] = [];
    for (const id of r.body.memoryIds) {
      const m = await memory(id);
      expect(m).toMatchObject({ userId: npcId, source: 'manual_ingestion_text', tier: 'assistant_core' });
      expect(Buffer.byteLength(m.content)).toBeLessThanOrEqual(4096);
      contents.push(m.content);
    }
    expect(contents.join('')).toBe(text);
    for (const c of contents.slice(0, -1)) expect(c.endsWith('\n\n')).toBe(true);
  });

  it('the assistant is a character too', async () => {
    const assistantId = await t.deps.services.characters.assistantUserId();
    const r = await t.api('POST', '/api/training/ingest-text', {
      token: developer.accessToken,
      body: { npcUserId: assistantId, text: 'I answer kindly.' },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body.memoryIds).toHaveLength(1);
  });

  it('refuses a text over 256 KiB, an empty one, and an account that is not a character (400)', async () => {
    const big = await t.api('POST', '/api/training/ingest-text', {
      token: admin.accessToken,
      body: { npcUserId: npcId, text: 'a'.repeat(256 * 1024 + 1) },
    });
    expect(big.status).toBe(400);
    expect(big.body.errors[0].path).toBe('body.text');
    const blank = await t.api('POST', '/api/training/ingest-text', {
      token: admin.accessToken,
      body: { npcUserId: npcId, text: '   ' },
    });
    expect(blank.status).toBe(400);
    for (const id of [player.id, 999_999]) {
      const r = await t.api('POST', '/api/training/ingest-text', {
        token: admin.accessToken,
        body: { npcUserId: id, text: 'Hello.' },
      });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'body.npcUserId' }] });
    }
  });
});

describe('ingest-text-by-heart', () => {
  it('parts of ≤ 2000 characters that reassemble byte for byte', async () => {
    const text =
      '  Ode to the lamp.\r\n\r\n' +
      Array.from(
        { length: 90 },
        (_, i) => `Verse ${i}: the light turns, ✨ and the sea answers — « encore ». `,
      ).join('') +
      '😀'.repeat(1200) +
      '\tthe end \n';
    const r = await t.api('POST', '/api/training/ingest-text-by-heart', {
      token: admin.accessToken,
      body: { npcUserId: npcId, title: 'Ode', text },
    });
    expect(r.status, r.text).toBe(201);
    expect(r.body).toMatchObject({ npcUserId: npcId, title: 'Ode' });
    expect(r.body.byHeartId).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.parts).toBe(r.body.memoryIds.length);
    expect(r.body.parts).toBeGreaterThan(3);

    for (const [i, id] of r.body.memoryIds.entries()) {
      const m = await memory(id);
      expect(m.source).toBe('document_ingestion');
      expect(m.content.length).toBeLessThanOrEqual(2000);
      expect(m.metadata).toEqual({
        byHeartId: r.body.byHeartId,
        title: 'Ode',
        part: i + 1,
        parts: r.body.parts,
      });
    }

    const back = await t.api('GET', `/api/training/by-heart/${r.body.byHeartId}`, {
      token: admin.accessToken,
    });
    expect(back.status).toBe(200);
    expect(back.body).toEqual({
      byHeartId: r.body.byHeartId,
      npcUserId: npcId,
      title: 'Ode',
      parts: r.body.parts,
      text,
    });
    expect(Buffer.from(back.body.text).equals(Buffer.from(text))).toBe(true);
  });

  it('unknown id → 404; a title over 200 → 400', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      const r = await t.api('GET', `/api/training/by-heart/${id}`, { token: admin.accessToken });
      expect(r.status).toBe(404);
    }
    const r = await t.api('POST', '/api/training/ingest-text-by-heart', {
      token: admin.accessToken,
      body: { npcUserId: npcId, title: 'x'.repeat(201), text: 'Hi.' },
    });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].path).toBe('body.title');
  });
});

describe('who may call', () => {
  it('non-admins get 403 on every training route; no token 401', async () => {
    const routes: [string, string, unknown?][] = [
      ['POST', '/api/training/ingest-text', { npcUserId: npcId, text: 'x' }],
      ['POST', '/api/training/ingest-text-by-heart', { npcUserId: npcId, title: 't', text: 'x' }],
      ['GET', '/api/training/by-heart/00000000-0000-4000-8000-000000000000'],
      ['POST', '/api/training/ingest-file'],
      ['POST', '/api/training/ingest-screenshot'],
      ['GET', '/api/training/jobs'],
      ['GET', '/api/training/jobs/00000000-0000-4000-8000-000000000000'],
      [
        'POST',
        '/api/training/simulation',
        { initiatorId: npcId, topic: 'x', participantIds: [npcId, npcId + 1] },
      ],
    ];
    for (const [method, path, body] of routes) {
      const r = await t.api(method, path, { token: player.accessToken, body });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.code).toBe('forbidden');
      const anon = await t.api(method, path, { body });
      expect(anon.status, `${method} ${path}`).toBe(401);
    }
  });

  it('an unknown job is 404; the list filters by status', async () => {
    const r = await t.api('GET', '/api/training/jobs/00000000-0000-4000-8000-000000000000', {
      token: admin.accessToken,
    });
    expect(r.status).toBe(404);
    const list = await t.api('GET', '/api/training/jobs?status=failed&limit=5', { token: admin.accessToken });
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ jobs: [] });
    const bad = await t.api('GET', '/api/training/jobs?status=nope', { token: admin.accessToken });
    expect(bad.status).toBe(400);
  });
});
