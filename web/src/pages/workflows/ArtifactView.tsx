// An artifact opened from the list: its content and review notes, reviewed with notes.
import { useEffect, useRef, useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { useRead } from '../../lib/useRead';
import { Alert } from '../../ui';

type Artifact = Schemas['WorkflowArtifact'];

export function ArtifactView({
  id,
  onClose,
  onReviewed,
}: {
  id: string;
  onClose: () => void;
  onReviewed: (a: Artifact, advanced: string | null) => void;
}) {
  const read = useRead(`artifact:${id}`, () =>
    api.GET('/api/protocol/artifacts/{id}', { params: { path: { id } } }),
  );
  const artifact = read.data;
  const [notes, setNotes] = useState('');
  const [error, setError] = useState<string | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  // Once it is read: its notes to start from, and the focus on its heading.
  useEffect(() => {
    if (!artifact) return;
    setNotes(artifact.reviewNotes ?? '');
    heading.current?.focus();
  }, [artifact?.id]);

  async function review(approve: boolean) {
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/artifacts/{id}/review', {
      params: { path: { id } },
      body: { approve, ...(notes ? { notes } : {}) },
    });
    if (err || !data) return setError(describe(err));
    read.set({ ...data.artifact, content: artifact?.content ?? data.artifact.content });
    onReviewed(data.artifact, data.advanced ? data.advanced.to : null);
  }

  return (
    <section className="artifact-view" aria-labelledby="artifact-title">
      <div className="row wrap heading-row">
        <h3 id="artifact-title" className="grow" tabIndex={-1} ref={heading}>
          Artifact: {artifact?.summary ?? '…'}
        </h3>
        <button type="button" className="secondary" onClick={onClose}>
          Close artifact
        </button>
      </div>
      <Alert message={error ?? read.error} />
      {artifact && (
        <>
          <p className="muted small">
            {artifact.status} · review {artifact.reviewStatus}
            {artifact.reviewedAt && ` on ${new Date(artifact.reviewedAt).toLocaleString()}`}
          </p>
          <pre className="content" tabIndex={0} aria-label="Artifact content">
            {artifact.content || '(empty)'}
          </pre>
          {artifact.reviewStatus === 'pending' && artifact.status === 'ready' ? (
            <>
              <label>
                Review notes
                <textarea
                  rows={2}
                  maxLength={2000}
                  value={notes}
                  onChange={(e) => setNotes(e.target.value)}
                />
              </label>
              <div className="row">
                <button type="button" onClick={() => void review(true)}>
                  Approve with notes
                </button>
                <button type="button" className="danger" onClick={() => void review(false)}>
                  Reject with notes
                </button>
              </div>
            </>
          ) : (
            <p>
              <strong>Review notes:</strong> {artifact.reviewNotes || 'none'}
            </p>
          )}
        </>
      )}
    </section>
  );
}
