// The Workflows page's reads, each through `useRead` so that only the current answer shows: the
// definitions, the instances on the board, the instance shown, and that instance's tasks and
// artifacts. While a run is active the instance is read again every two seconds, and its tasks
// and artifacts with it (they change, and the run ends or the instance moves on).
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { useRead } from '../../lib/useRead';

type Instance = Schemas['WorkflowInstance'];

/** How often a run in progress is followed. */
const FOLLOW_RUN_MS = 2000;

export function useDefinitions() {
  const read = useRead('definitions', () => api.GET('/api/protocol/definitions'));
  return { definitions: read.data?.definitions ?? [], error: read.error };
}

export function useInstances() {
  const read = useRead('instances', () =>
    api.GET('/api/protocol/instances', { params: { query: { limit: 200 } } }),
  );
  return { instances: read.data?.instances ?? [], error: read.error, reload: read.reload };
}

/** The instance shown: the one picked on the board (or just made) at once, then as the server
 * has it, read again on `refresh` and while its run is active. */
export function useShownInstance() {
  const [picked, setPicked] = useState<Instance | null>(null);
  const id = picked?.id ?? null;
  const read = useRead(
    id === null ? null : `instance:${id}`,
    () => api.GET('/api/protocol/instances/{id}', { params: { path: { id: id! } } }),
    { every: (fresh) => ((fresh ?? picked)?.activeRunId ? FOLLOW_RUN_MS : null) },
  );
  return { instance: read.data ?? picked, pick: setPicked, refresh: read.reload };
}

// The tasks and artifacts are read again each time the instance is (its object is new then): a
// write that moved it, a pass that seeded its tasks, and every two seconds of an active run.

export function useTasks(instance: Instance) {
  const id = instance.id;
  return useRead(
    `tasks:${id}`,
    async () => {
      const { data, error } = await api.GET('/api/protocol/instances/{id}/tasks', {
        params: { path: { id } },
      });
      return { data: data?.tasks ?? [], error };
    },
    { revision: instance },
  );
}

export function useArtifacts(instance: Instance) {
  const id = instance.id;
  return useRead(
    `artifacts:${id}`,
    async () => {
      const { data, error } = await api.GET('/api/protocol/instances/{id}/artifacts', {
        params: { path: { id } },
      });
      return { data: data?.artifacts ?? [], error };
    },
    { revision: instance },
  );
}
