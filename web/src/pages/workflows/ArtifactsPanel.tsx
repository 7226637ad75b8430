// An instance's artifacts: each with its review status, approved or rejected from the list, or
// opened to read its content and review it with notes; a failed review is this panel's own alert.
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';
import { withArtifact } from './board';
import { useArtifacts } from './useWorkflows';
import { ArtifactView } from './ArtifactView';

type Artifact = Schemas['WorkflowArtifact'];

export function ArtifactsPanel({
  instance,
  onStatus,
  onChanged,
}: {
  instance: Schemas['WorkflowInstance'];
  onStatus: (status: string) => void;
  /** A review may have moved the instance on: read it again. */
  onChanged: () => Promise<void>;
}) {
  const artifacts = useArtifacts(instance);
  const list = artifacts.data ?? [];
  const [viewing, setViewing] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function review(artifact: Artifact, approve: boolean) {
    setError(null);
    const { error: err } = await api.POST('/api/protocol/artifacts/{id}/review', {
      params: { path: { id: artifact.id } },
      body: { approve },
    });
    if (err) return setError(describe(err));
    onStatus(approve ? 'Artifact approved.' : 'Artifact rejected.');
    artifacts.set(
      (xs) => xs && withArtifact(xs, { id: artifact.id, reviewStatus: approve ? 'approved' : 'rejected' }),
    );
  }

  return (
    <>
      {list.length > 0 && <h3 className="small">Artifacts</h3>}
      {list.length > 0 && (
        <ul aria-label="Artifacts" className="list">
          {list.map((a) => (
            <li key={a.id} className="row wrap artifact">
              <span className="grow">
                {a.summary} <span className="muted small">({a.reviewStatus})</span>
              </span>
              <div className="buttons">
                <button type="button" className="secondary" onClick={() => setViewing(a.id)}>
                  View<span className="sr"> artifact {a.summary}</span>
                </button>
                {a.reviewStatus === 'pending' && (
                  <>
                    <button type="button" className="secondary" onClick={() => void review(a, true)}>
                      Approve artifact<span className="sr"> {a.summary}</span>
                    </button>
                    <button type="button" className="danger" onClick={() => void review(a, false)}>
                      Reject<span className="sr"> {a.summary}</span>
                    </button>
                  </>
                )}
              </div>
            </li>
          ))}
        </ul>
      )}
      <Alert message={error ?? artifacts.error} />
      {viewing && (
        <ArtifactView
          key={viewing}
          id={viewing}
          onClose={() => setViewing(null)}
          onReviewed={(reviewed, advanced) => {
            artifacts.set((xs) => xs && withArtifact(xs, reviewed));
            onStatus(
              `Artifact ${reviewed.reviewStatus === 'approved' ? 'approved' : 'rejected'}${advanced ? `; moved to ${advanced}` : ''}.`,
            );
            void onChanged();
          }}
        />
      )}
    </>
  );
}
