// Screenshots read by OCR (contract: "Training (admin)", ingest-screenshot), on the real server:
// PNGs of clear text rendered here, in English and in French with accents, read with the shipped
// language data; the memory and its metadata; the refusals (415, 413, 400). Each recognition costs
// about a second of CPU, so there are two.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, createUser, eventually, type TestApp, type TestUser } from '../../../test/harness.js';
import { buildPdf, buildTextPng, postForm } from './training.fixtures.js';

let t: TestApp;
let admin: TestUser;
let npcId: number;

beforeAll(async () => {
  t = await createTestApp({ TRAINING_IMAGE_LIMIT: String(200 * 1024) });
  admin = await createUser(t, 'cso');
  npcId = (await t.deps.services.characters.createNpc({ name: 'Mara', description: '' })).id;
});
afterAll(() => t.close());

const shot = (data: Buffer, fields: Record<string, string> = {}, name = 'shot.png') =>
  postForm(t, '/api/training/ingest-screenshot', admin.accessToken, { npcUserId: String(npcId), ...fields }, [
    { name, data },
  ]);

async function done(jobId: string) {
  return eventually(
    async () => {
      const r = await t.api('GET', `/api/training/jobs/${jobId}`, { token: admin.accessToken });
      expect(['completed', 'failed']).toContain(r.body.status);
      return r.body;
    },
    { timeoutMs: 60_000 },
  );
}

async function memoryOf(id: number) {
  const r = await t.api('GET', `/api/admin/memories?userId=${npcId}&source=ingested_screenshot`, {
    token: admin.accessToken,
  });
  return r.body.memories.find((m: any) => m.id === id);
}

describe('ingest-screenshot', () => {
  it('reads English text into one ingested_screenshot memory with its confidence', async () => {
    const r = await shot(buildTextPng(['The lighthouse stands', 'on the northern cliff 1887']), {
      languages: 'eng',
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    expect(r.headers.get('location')).toBe(`/api/training/jobs/${r.body.jobId}`);
    const job = await done(r.body.jobId);
    expect(job).toMatchObject({
      kind: 'ingest_screenshot',
      status: 'completed',
      stage: 'done',
      mimeType: 'image/png',
      offline: false,
    });
    expect(job.memoryIds).toHaveLength(1);
    const m = await memoryOf(job.memoryIds[0]);
    expect(m.content).toMatch(/lighthouse stands/);
    expect(m.content).toMatch(/northern cliff 1887/);
    expect(m.metadata).toMatchObject({ trainingJobId: job.id, fileName: 'shot.png', languages: ['eng'] });
    expect(m.metadata.confidence).toBeGreaterThan(0.6);
    expect(m.metadata.confidence).toBeLessThanOrEqual(1);
  });

  it('reads French with its accents (both shipped languages by default)', async () => {
    const r = await shot(buildTextPng(['Le café de l’élève', 'près de la fenêtre à Noël']));
    expect(r.status).toBe(202);
    const job = await done(r.body.jobId);
    expect(job.status).toBe('completed');
    const m = await memoryOf(job.memoryIds[0]);
    for (const word of ['café', 'élève', 'fenêtre', 'Noël']) expect(m.content).toContain(word);
    expect(m.metadata.languages).toEqual(['eng', 'fra']);
  });

  it('415 for a PDF or text; 413 over the byte limit or 40 megapixels; 400 for an unknown language', async () => {
    const pdf = await shot(await buildPdf([['x']]), {}, 'a.pdf');
    expect(pdf.status).toBe(415);
    const text = await shot(Buffer.from('hello'), {}, 'a.txt');
    expect(text.status).toBe(415);
    const big = await shot(Buffer.concat([buildTextPng(['x']), Buffer.alloc(200 * 1024)]));
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'payload_too_large', limit: 200 * 1024 });
    // A PNG header claiming 8000 × 6000 pixels: refused before any decoding.
    const header = buildTextPng(['x']).subarray(0, 33);
    const huge = Buffer.from(header);
    huge.writeUInt32BE(8000, 16);
    huge.writeUInt32BE(6000, 20);
    const pixels = await shot(huge);
    expect(pixels.status).toBe(413);
    expect(pixels.body).toMatchObject({ code: 'payload_too_large', maxPixels: 40_000_000 });
    const lang = await shot(buildTextPng(['x']), { languages: 'eng,deu' });
    expect(lang.status).toBe(400);
    expect(lang.body.errors[0]).toMatchObject({ path: 'body.languages' });
  });
});
