// The knowledge page's pure rules (table-tested in knowledge.test.ts): a training job moved on by
// a `trainingProgress` event, a job's state in words, and which memories a tier and source filter
// keep. The tier of a source is the server's own table (memory.rules.ts has no import).
import type { Schemas } from '../../api/client';
import { SOURCE_TIER, type MemorySource } from '../../../../src/modules/memory/memory.rules';

export type Job = Schemas['TrainingJob'];
export type Progress = Pick<Job, 'status' | 'stage' | 'progress' | 'memoryIds'> & { jobId: string };
export type Tier = (typeof SOURCE_TIER)[MemorySource];
export const SOURCES = Object.keys(SOURCE_TIER) as MemorySource[];
export const TIERS: Tier[] = ['assistant_core', 'shared', 'world'];
export const TIER_NAMES: Record<Tier, string> = {
  assistant_core: 'core (the character’s own)',
  shared: 'shared (about players)',
  world: 'world',
};

export function tierOf(source: string): Tier | null {
  return source in SOURCE_TIER ? SOURCE_TIER[source as MemorySource] : null;
}

/** The jobs with one moved on by a progress event; `known` is false for a job not listed yet
 * (started elsewhere: the list is read again). A late event never moves a finished job back. */
export function applyProgress(jobs: Job[], p: Progress): { jobs: Job[]; known: boolean } {
  const at = jobs.findIndex((j) => j.id === p.jobId);
  if (at < 0) return { jobs, known: false };
  const job = jobs[at]!;
  if (job.status === 'completed' || job.status === 'failed') return { jobs, known: true };
  const copy = jobs.slice();
  copy[at] = { ...job, status: p.status, stage: p.stage, progress: p.progress, memoryIds: p.memoryIds };
  return { jobs: copy, known: true };
}

/** A job's state in a sentence. */
export function jobState(j: Job): string {
  if (j.status === 'completed') {
    const n = j.memoryIds.length;
    const notes = [j.truncated && 'the text was cut short', j.offline && 'beliefs made offline'].filter(
      Boolean,
    );
    return `Done: ${n} ${n === 1 ? 'memory' : 'memories'}${notes.length ? ` (${notes.join('; ')})` : ''}.`;
  }
  if (j.status === 'failed') return `Failed: ${j.error?.detail ?? j.error?.title ?? 'no reason given'}.`;
  if (j.status === 'queued') return 'Waiting to start.';
  return `${j.stage[0]!.toUpperCase()}${j.stage.slice(1)}… ${Math.round(j.progress * 100)} %`;
}

export interface MemoryFilter {
  tier: Tier | '';
  source: MemorySource | '';
}

/** Whether a memory passes the tier and source filter. */
export function keeps(m: { source: string }, f: MemoryFilter): boolean {
  if (f.source && m.source !== f.source) return false;
  return !f.tier || tierOf(m.source) === f.tier;
}

/** The sources a tier's filter offers. */
export function sourcesOf(tier: Tier | ''): MemorySource[] {
  return tier ? SOURCES.filter((s) => SOURCE_TIER[s] === tier) : SOURCES;
}
