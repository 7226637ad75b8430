import { describe, expect, it } from 'vitest';
import { applyProgress, jobState, keeps, sourcesOf, tierOf, type Job, type Progress } from './knowledge';

const job: Job = {
  id: 'a',
  kind: 'ingest_file',
  npcUserId: 7,
  fileName: 'lore.txt',
  mimeType: 'text/plain',
  status: 'queued',
  stage: 'queued',
  progress: 0,
  memoryIds: [],
  truncated: false,
  offline: false,
  error: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  updatedAt: '2026-01-01T00:00:00.000Z',
};

describe('training jobs', () => {
  it('moves a listed job on, leaves others, and says when a job is not listed', () => {
    const other = { ...job, id: 'b' };
    const p: Progress = {
      jobId: 'a',
      status: 'running',
      stage: 'synthesising',
      progress: 0.5,
      memoryIds: [],
    };
    const r = applyProgress([job, other], p);
    expect(r.known).toBe(true);
    expect(r.jobs[0]).toMatchObject({ status: 'running', stage: 'synthesising', progress: 0.5 });
    expect(r.jobs[1]).toBe(other);
    expect(applyProgress([other], p)).toEqual({ jobs: [other], known: false });
  });

  it('never moves a finished job back', () => {
    const done: Job = { ...job, status: 'completed', stage: 'done', progress: 1, memoryIds: [4] };
    const late: Progress = { jobId: 'a', status: 'running', stage: 'storing', progress: 0.9, memoryIds: [] };
    expect(applyProgress([done], late).jobs[0]).toBe(done);
  });

  it.each([
    [{}, 'Waiting to start.'],
    [{ status: 'running', stage: 'extracting', progress: 0.25 }, 'Extracting… 25 %'],
    [{ status: 'completed', stage: 'done', progress: 1, memoryIds: [1] }, 'Done: 1 memory.'],
    [
      { status: 'completed', memoryIds: [1, 2], truncated: true, offline: true },
      'Done: 2 memories (the text was cut short; beliefs made offline).',
    ],
    [
      {
        status: 'failed',
        error: { type: 'about:blank', title: 'Bad file', status: 400, detail: 'not a PDF' },
      },
      'Failed: not a PDF.',
    ],
  ])('says %j as %j', (change, text) => {
    expect(jobState({ ...job, ...change } as Job)).toBe(text);
  });
});

describe('the memory filter', () => {
  it.each([
    [{ source: 'document_ingestion' }, { tier: '', source: '' }, true],
    [{ source: 'document_ingestion' }, { tier: 'assistant_core', source: '' }, true],
    [{ source: 'document_ingestion' }, { tier: 'shared', source: '' }, false],
    [{ source: 'shared' }, { tier: 'shared', source: 'shared' }, true],
    [{ source: 'core_belief' }, { tier: '', source: 'document_ingestion' }, false],
  ] as const)('%j with %j: %s', (m, f, yes) => {
    expect(keeps(m, f)).toBe(yes);
  });

  it('offers the sources of the tier chosen', () => {
    expect(sourcesOf('world')).toEqual(['world']);
    expect(sourcesOf('shared')).toEqual(['shared', 'vision_analysis']);
    expect(sourcesOf('')).toContain('manual_ingestion_text');
    expect(tierOf('document_ingestion')).toBe('assistant_core');
    expect(tierOf('nonsense')).toBeNull();
  });
});
