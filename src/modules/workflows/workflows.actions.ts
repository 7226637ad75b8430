// A state's entry actions (contract "Workflows"), one table: what each reads and what it does.
// What an action reads goes out with the state's update (it never depends on the instance's own
// row), and the action runs once both answered, on the write that entered the state. The table's
// type makes an action named in ACTIONS and missing here a compile error.
import { together, type Trx } from '../../platform/db/database.js';
import type { UnitOfWork } from '../../platform/db/unit-of-work.js';
import type { ActionName } from './workflows.definitions.js';
import { titleOf } from './workflows.events.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';
import type { RunTrigger } from './workflows.tables.js';
import type { WorkflowPorts, WorkflowsDeps } from './workflows.types.js';

/** What an entry action uses of the write that entered the state (WorkflowWrite). */
export interface EntryWrite {
  readonly uow: UnitOfWork;
  readonly trx: Trx;
  readonly deps: Pick<WorkflowsDeps, 'addMemory' | 'issues'>;
  readonly ports: WorkflowPorts;
  /** The instance as it is entering the state (its new state and visit). */
  readonly row: repo.InstanceRow;
  record(event: { eventType: string; eventText: string; metadata?: Record<string, unknown> }): void;
  startRun(trigger: RunTrigger, taskIds: string[]): { id: string };
}

interface EntryAction<Reads> {
  /** Sends what the action reads (not waited for here). */
  reads(w: EntryWrite): Promise<Reads>;
  /** Runs the action on what it read: its statements and its event, on the write. */
  does(w: EntryWrite, read: Reads): Promise<void> | void;
}

/** What each action reads. */
interface ActionReads {
  announceExecutionStart: { active: runs.RunRow | undefined; mayStart: boolean };
  collectArtifacts: repo.ArtifactListRow[];
}

const ENTRY_ACTIONS: { [A in ActionName]: EntryAction<ActionReads[A]> } = {
  /** An event (and so a notification), and an orchestrator run (trigger state_entry) unless one
   * runs, no executor is wired, or the creator's autoRunOrchestrator is off. */
  announceExecutionStart: {
    async reads({ trx, row, ports }) {
      const creator = row.created_by_user_id;
      const [active, mayStart] = await together([
        runs.findActiveRun(trx, row.id),
        // An executor is wired, and the creator's autoRunOrchestrator (on by default).
        ports.runExecutor && creator !== null ? (ports.autoRunOrchestrator?.(creator, trx) ?? true) : false,
      ]);
      return { active, mayStart };
    },
    does(w, { active, mayStart }) {
      const runId = active?.id ?? (mayStart ? w.startRun('state_entry', []).id : null);
      w.record({
        eventType: 'workflow_execution_started',
        eventText: `Execution started in ${w.row.state}`,
        metadata: { runId },
      });
    },
  },

  /** An event (and so a notification), a `shared` memory for the creator listing the artifacts,
   * and, when a tracker is configured, an issue filed by its job (the event names it; its number
   * and URL reach the artifacts once it is created). */
  collectArtifacts: {
    reads: ({ trx, row }) => repo.listArtifacts(trx, row.id),
    async does(w, artifacts) {
      const { row } = w;
      const list = artifacts.map((a) => ({
        id: a.id,
        taskId: a.task_id,
        summary: a.summary,
        reviewStatus: a.review_status,
      }));
      const title = titleOf(row);
      const lines = list.map((a) => `- ${a.summary || '(no summary)'} [${a.reviewStatus}] (${a.id})`);
      const text =
        `Artifacts of workflow ${title === null ? row.id : `"${title}"`} (${row.machine_id}) at ${row.state}: ${list.length}\n${lines.join('\n')}`.trim();
      const issue = w.deps.issues?.file(w.uow, {
        instanceId: row.id,
        machineId: row.machine_id,
        title,
        state: row.state,
        stateVisit: row.state_visit,
        artifacts: list,
      });
      // The memory's and the issue's statements are independent: made together;
      // the event names the memory, so it waits for them.
      const [memory] = await together([
        row.created_by_user_id === null
          ? null
          : w.deps.addMemory(
              {
                userId: row.created_by_user_id,
                content: text,
                source: 'shared',
                metadata: { stateMachineInstanceId: row.id, machineId: row.machine_id, state: row.state },
              },
              w.uow,
            ),
        issue?.written,
      ]);
      w.record({
        eventType: 'workflow_artifacts_collected',
        eventText: `${list.length} artifact(s) collected in ${row.state}`,
        metadata: {
          artifacts: list,
          memoryId: memory?.id ?? null,
          issue: issue ? { id: issue.id, status: 'pending' } : null,
        },
      });
    },
  },
};

/** Sends what the action reads; answers, once it is read, with the action ready to run. */
export function readForAction<A extends ActionName>(
  name: A,
  w: EntryWrite,
): Promise<() => Promise<void> | void> {
  const action: EntryAction<ActionReads[A]> = ENTRY_ACTIONS[name];
  return action.reads(w).then((read) => () => action.does(w, read));
}
