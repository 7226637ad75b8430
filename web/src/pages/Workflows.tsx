// Workflows: create an instance of a definition, see instances on a board by state, move one
// through its transitions (a refused guard says what is missing), approve it; its suggestions
// (execute, dismiss, undo an automatic move); its tasks (edit, re-run) and artifacts (read, review).
// The parts live in ./workflows/: the reads (useWorkflows.ts), the cards, and the pure rules
// (board.ts, tasks.ts).
import { useState } from 'react';
import { Alert, Page } from '../ui';
import { boardStates } from './workflows/board';
import { Board } from './workflows/Board';
import { InstanceCard } from './workflows/InstanceCard';
import { NewWorkflow } from './workflows/NewWorkflow';
import { useDefinitions, useInstances, useShownInstance } from './workflows/useWorkflows';

export default function Workflows({ admin = false }: { admin?: boolean }) {
  const { definitions } = useDefinitions();
  const board = useInstances();
  const shown = useShownInstance();
  const instance = shown.instance;
  // The definition chosen for a new workflow: the first until one is picked.
  const [chosen, setChosen] = useState('');
  const machineId = chosen || (definitions[0]?.machineId ?? '');
  const [status, setStatus] = useState('');

  /** The instance shown may have moved: read it and the board again. */
  async function refresh() {
    await Promise.all([shown.refresh(), board.reload()]);
  }

  const definition = definitions.find((d) => d.machineId === (instance?.machineId ?? machineId));
  return (
    <Page title="Workflows">
      <NewWorkflow
        definitions={definitions}
        machineId={machineId}
        onMachineId={setChosen}
        status={status}
        onCreated={async (made) => {
          shown.pick(made);
          setStatus(`Created a ${made.machineId} workflow in state ${made.state}.`);
          await board.reload();
        }}
      />
      {instance && (
        <InstanceCard instance={instance} admin={admin} onStatus={setStatus} onChanged={refresh} />
      )}
      <Alert message={board.error} />
      <Board
        states={boardStates(definition, board.instances)}
        instances={board.instances}
        shownId={instance?.id ?? null}
        onPick={shown.pick}
      />
    </Page>
  );
}
