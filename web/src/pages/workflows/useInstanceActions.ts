// What a person does to the instance shown: move it, approve it (an approval that satisfies the
// guard moves it by itself), attach evidence, start the orchestrator. Each says what happened, or
// keeps the refusal as the instance card's error (a refused guard names what is missing).
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';

type Instance = Schemas['WorkflowInstance'];
export interface Evidence {
  description: string;
  proofUrl: string;
}

export function useInstanceActions(
  instance: Instance,
  { onStatus, onChanged }: { onStatus: (status: string) => void; onChanged: () => Promise<void> },
) {
  const [error, setError] = useState<string | null>(null);
  const path = { path: { id: instance.id } };
  const expectedVersion = instance.version;

  /** Runs one write: its refusal is the error; otherwise the instance is read again, and then its
   * status is said (so the card never shows the old state under the new status, and a next move
   * is not sent with the old version). */
  async function act(write: () => Promise<{ error?: unknown; status?: string }>): Promise<boolean> {
    setError(null);
    const { error: err, status } = await write();
    if (err) {
      setError(describe(err));
      return false;
    }
    await onChanged();
    if (status) onStatus(status);
    return true;
  }

  const transition = (to: string) =>
    act(async () => {
      const { data, error: err } = await api.POST('/api/protocol/instances/{id}/transition', {
        params: path,
        body: { targetState: to, expectedVersion },
      });
      // A refused move clears the last success, so the alert stands alone.
      if (err || !data) onStatus('');
      return err || !data ? { error: err ?? {} } : { status: `Moved to ${to}.` };
    });

  const approve = () =>
    act(async () => {
      const { data, error: err } = await api.POST('/api/protocol/instances/{id}/approvals', {
        params: path,
        body: { expectedVersion },
      });
      if (err || !data) return { error: err ?? {} };
      return { status: data.advanced ? `Approved; moved to ${data.instance.state}.` : 'Approved.' };
    });

  const attachEvidence = (evidence: Evidence) =>
    act(async () => {
      const { error: err } = await api.POST('/api/protocol/instances/{id}/evidence', {
        params: path,
        body: { ...evidence, expectedVersion },
      });
      return err ? { error: err } : { status: 'Evidence attached.' };
    });

  const orchestrate = () =>
    act(async () => {
      const { error: err } = await api.POST('/api/protocol/instances/{id}/orchestrate', {
        params: path,
        body: {},
      });
      return err ? { error: err } : { status: 'Orchestration started.' };
    });

  return { error, transition, approve, attachEvidence, orchestrate };
}
