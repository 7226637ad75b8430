// The character's training jobs, newest first, moved on live by `trainingProgress` (the socket of
// the admin who started them), each with its result: the memories (beliefs) a file made, shown on
// request, or the reason it failed.
import { useEffect, useRef, useState } from 'react';
import { api } from '../../api/client';
import { trainingSocket } from '../../lib/sockets';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';
import { applyProgress, jobState, type Job } from './knowledge';

export function JobsCard({
  npcId,
  started,
  onFinished,
}: {
  npcId: number;
  started: number;
  onFinished: () => void;
}) {
  const jobs = useRead(
    `studio:jobs:${npcId}`,
    async () => {
      const { data, error } = await api.GET('/api/training/jobs', { params: { query: { limit: 50 } } });
      return { data: (data?.jobs ?? []).filter((j) => j.npcUserId === npcId), error };
    },
    { revision: started },
  );
  const [open, setOpen] = useState<string | null>(null);
  const [live, setLive] = useState(false);
  const finished = useRef(onFinished);
  finished.current = onFinished;
  const { set, reload } = jobs;

  useEffect(() => {
    const s = trainingSocket();
    s.on('connect', () => setLive(true));
    s.on('disconnect', () => setLive(false));
    s.on('trainingProgress', (p) => {
      let known = true;
      set((js) => {
        if (!js) return js;
        const r = applyProgress(js, p);
        known = r.known;
        return r.jobs;
      });
      // A job not listed yet (its 202 came after this event), or one just finished (its error and
      // flags are in the job itself): read the list again.
      if (!known || p.status === 'completed' || p.status === 'failed') void reload();
      if (p.status === 'completed') finished.current();
    });
    s.connect();
    return () => {
      s.disconnect();
    };
  }, [set, reload]);

  const list = jobs.data ?? [];
  return (
    <section className="card" aria-labelledby="jobs-title">
      <div className="row heading-row">
        <h2 id="jobs-title" className="grow">
          Training jobs
        </h2>
        <span className="muted small">{live ? 'Live' : 'Offline'}</span>
      </div>
      <Alert message={jobs.error} />
      <ul className="list" aria-label="Training jobs">
        {!jobs.loading && list.length === 0 && <li className="muted">No file or screenshot taught yet.</li>}
        {list.map((j) => (
          <li key={j.id} className="job">
            <p>
              <strong>{j.fileName}</strong>{' '}
              <span className="muted small">
                {j.kind === 'ingest_file' ? 'file' : 'screenshot'} · {new Date(j.createdAt).toLocaleString()}
              </span>
            </p>
            <progress
              max={1}
              value={j.status === 'completed' ? 1 : j.progress}
              aria-label={`Progress of ${j.fileName}`}
            />
            <p className="small" aria-live="polite">
              {jobState(j)}
            </p>
            {j.status === 'completed' && j.memoryIds.length > 0 && (
              <button
                type="button"
                className="link"
                aria-expanded={open === j.id}
                onClick={() => setOpen((o) => (o === j.id ? null : j.id))}
              >
                {open === j.id ? 'Hide' : 'Show'} what {j.fileName} taught
              </button>
            )}
            {open === j.id && <JobMemories npcId={npcId} job={j} />}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The memories one job stored: its beliefs (and, for a document, its passages). */
function JobMemories({ npcId, job }: { npcId: number; job: Job }) {
  const read = useRead(`studio:job-memories:${job.id}`, async () => {
    const { data, error } = await api.GET('/api/admin/memories', {
      params: { query: { userId: npcId, limit: 200 } },
    });
    const ids = new Set(job.memoryIds);
    return { data: (data?.memories ?? []).filter((m) => ids.has(m.id)), error };
  });
  return (
    <div className="job-memories">
      <Alert message={read.error} />
      {read.loading && <p className="muted small">Loading…</p>}
      <ul className="list" aria-label={`What ${job.fileName} taught`}>
        {(read.data ?? []).map((m) => (
          <li key={m.id} className="small">
            <span className="badge">{m.source}</span> {m.content}
          </li>
        ))}
      </ul>
    </div>
  );
}
