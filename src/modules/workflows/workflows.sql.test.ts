// The workflows' hand-written and largest SQL, snapshotted (sql/workflows.sql; `npx vitest run -u`
// rewrites it): a write's locked read and state entry, approvals, runs (their start, lease and
// end), a run's task claims and finishes, and the issue tracker's outbox.
import { describe, expect, it } from 'vitest';
import { sqlSnapshot } from '../../../test/sql-snapshot.js';
import * as issues from './workflows.issues.repository.js';
import * as repo from './workflows.repository.js';
import * as runs from './workflows.runs.repository.js';

const instance = '00000000-0000-4000-8000-000000000001';
const run = '00000000-0000-4000-8000-000000000002';
const task = '00000000-0000-4000-8000-000000000003';
const artifact = '00000000-0000-4000-8000-000000000004';

describe('workflows repository SQL', () => {
  it("an instance's writes: its locked reads, a state's entry, approvals", async () => {
    const text = await sqlSnapshot({
      findInstance: (db) => repo.findInstance(db, instance),
      findInstanceForUpdate: (db) => repo.findInstance(db, instance, true),
      findInstanceForShare: (db) => repo.findInstance(db, instance, 'share'),
      listInstances: (db) =>
        repo.listInstances(db, {
          createdByUserId: 7,
          state: 'triage',
          archived: false,
          limit: 50,
          offset: 0,
        }),
      enterState: (db) => repo.enterState(db, instance, 'execution', 7, false),
      enterTerminalState: (db) => repo.enterState(db, instance, 'completed', 7, true),
      restoreState: (db) => repo.restoreState(db, instance, 'triage', 2, 7),
      setActiveRun: (db) => repo.setActiveRun(db, instance, run),
      insertApproval: (db) =>
        repo.insertApproval(db, {
          id: run,
          instanceId: instance,
          state: 'triage',
          stateVisit: 2,
          userId: 7,
          name: 'Grace',
          note: null,
        }),
      countApprovals: (db) => repo.countApprovals(db, [instance]),
      countPendingArtifacts: (db) => repo.countPendingArtifacts(db, instance),
      statesOf: (db) => repo.statesOf(db, { ids: [instance], registryInstanceIds: [3] }),
    });
    await expect(text).toMatchFileSnapshot('./sql/workflows.sql');
  });

  it('a run: its start, lease and end, its task claims and finishes', async () => {
    const text = await sqlSnapshot({
      insertRun: (db) =>
        runs.insertRun(db, { id: run, instanceId: instance, trigger: 'manual', taskIds: [], userId: 7 }),
      setRunOptions: (db) => runs.setRunOptions(db, run, { runTasks: true, concurrency: 3 }),
      findActiveRun: (db) => runs.findActiveRun(db, instance),
      cancelActiveRuns: (db) => runs.cancelActiveRuns(db, instance),
      takeRun: (db) => runs.takeRun(db, run, 60),
      renewLease: (db) => runs.renewLease(db, run, 60),
      releaseLease: (db) => runs.releaseLease(db, run),
      setRunTasks: (db) => runs.setRunTasks(db, run, [task]),
      lockTasksWithClaims: (db) => runs.lockTasksWithClaims(db, run, [task]),
      claimTasks: (db) =>
        runs.claimTasks(db, run, instance, [
          {
            taskId: task,
            personaId: 5,
            summary: 'Write the guide',
            metadata: { runId: run, specialty: 'docs' },
          },
        ]),
      finishTasks: (db) =>
        runs.finishTasks(db, instance, run, [
          {
            taskId: task,
            artifactId: artifact,
            outcome: { ok: true, content: '# Guide' },
            wallMs: 12.5,
            modelMs: 10,
          },
          { taskId: run, artifactId: instance, outcome: { ok: false }, wallMs: 3, modelMs: 2 },
        ]),
      finishRun: (db) => runs.finishRun(db, run, 'completed', null),
      tasksPerPersona: (db) => runs.tasksPerPersona(db, instance),
      orphanedRuns: (db) => runs.orphanedRuns(db, 30, 100),
    });
    await expect(text).toMatchFileSnapshot('./sql/workflows.runs.sql');
  });

  it("the issue tracker's outbox", async () => {
    const text = await sqlSnapshot({
      insertIssue: (db) =>
        issues.insertIssue(db, {
          id: run,
          instanceId: instance,
          state: 'integration',
          stateVisit: 1,
          artifactIds: [artifact],
          title: 'Artifacts of workflow',
          body: 'body',
        }),
      findIssue: (db) => issues.findIssue(db, run),
      recordAttempt: (db) =>
        issues.recordAttempt(db, run, { status: 'created', issue: { number: 42, url: 'u' }, error: null }),
      setArtifactsIssue: (db) => issues.setArtifactsIssue(db, [artifact], { number: 42, url: 'u' }),
    });
    await expect(text).toMatchFileSnapshot('./sql/workflows.issues.sql');
  });
});
