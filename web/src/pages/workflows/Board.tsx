// The board: a column per state, each instance in its state's column, the one shown marked.
import type { Schemas } from '../../api/client';
import { instanceLabel } from './board';

type Instance = Schemas['WorkflowInstance'];

export function Board({
  states,
  instances,
  shownId,
  onPick,
}: {
  states: string[];
  instances: Instance[];
  shownId: string | null;
  onPick: (i: Instance) => void;
}) {
  return (
    <div className="board" aria-label="Board">
      {states.map((state) => (
        <section key={state} className="column" aria-label={state}>
          <h2 className="small">{state}</h2>
          <ul>
            {instances
              .filter((i) => i.state === state)
              .map((i) => (
                <li key={i.id}>
                  <button
                    type="button"
                    className={shownId === i.id ? 'selected' : 'plain'}
                    onClick={() => onPick(i)}
                  >
                    {instanceLabel(i)}
                  </button>
                </li>
              ))}
          </ul>
        </section>
      ))}
    </div>
  );
}
