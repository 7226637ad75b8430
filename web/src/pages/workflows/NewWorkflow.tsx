// The "New workflow" card: a definition to make an instance of; a refusal is this card's alert.
// The page's status line lives here too, at the top, where each action's outcome is announced.
import { useState } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { Alert } from '../../ui';

export function NewWorkflow({
  definitions,
  machineId,
  onMachineId,
  onCreated,
  status,
}: {
  definitions: Schemas['WorkflowDefinition'][];
  machineId: string;
  onMachineId: (id: string) => void;
  onCreated: (instance: Schemas['WorkflowInstance']) => Promise<void>;
  status: string;
}) {
  const [error, setError] = useState<string | null>(null);

  async function create() {
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/instances', { body: { machineId } });
    if (err || !data) return setError(describe(err));
    await onCreated(data);
  }

  return (
    <div className="card">
      <h2>New workflow</h2>
      <div className="row">
        <label>
          Definition
          <select value={machineId} onChange={(e) => onMachineId(e.target.value)}>
            {definitions.map((d) => (
              <option key={d.machineId} value={d.machineId}>
                {d.machineId} (v{d.version})
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={() => void create()} disabled={!machineId}>
          Create
        </button>
      </div>
      <Alert message={error} />
      <p role="status" className="muted">
        {status}
      </p>
    </div>
  );
}
