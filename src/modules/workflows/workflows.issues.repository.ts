// SQL only: the issues filed for collected artifacts (workflows.issues.ts), and the issue each
// artifact names.
import { sql } from 'kysely';
import { dbNow, type Executor } from '../../platform/db/database.js';
import type { IssueRef, IssueStatus } from './workflows.tables.js';

export function insertIssue(
  db: Executor,
  v: {
    id: string;
    instanceId: string;
    state: string;
    stateVisit: number;
    artifactIds: string[];
    title: string;
    body: string;
  },
) {
  return db
    .insertInto('workflow_issues')
    .values({
      id: v.id,
      instance_id: v.instanceId,
      state: v.state,
      state_visit: v.stateVisit,
      artifact_ids: v.artifactIds,
      title: v.title,
      body: v.body,
    })
    .execute();
}

export function findIssue(db: Executor, id: string) {
  return db.selectFrom('workflow_issues').selectAll().where('id', '=', id).executeTakeFirst();
}
export type IssueRow = NonNullable<Awaited<ReturnType<typeof findIssue>>>;

/** One attempt's outcome: the status it leaves, the number and URL of a created issue, the error
 * of a failed attempt. Only a pending issue changes (a created one is never written again). */
export function recordAttempt(
  db: Executor,
  id: string,
  v: { status: IssueStatus; issue: IssueRef | null; error: string | null },
) {
  return db
    .updateTable('workflow_issues')
    .set({
      status: v.status,
      attempts: sql<number>`attempts + 1`,
      number: v.issue?.number ?? null,
      url: v.issue?.url ?? null,
      last_error: v.error,
      updated_at: dbNow(),
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning('id')
    .executeTakeFirst();
}

/** The artifacts an issue lists name it. */
export function setArtifactsIssue(db: Executor, artifactIds: string[], issue: IssueRef) {
  if (artifactIds.length === 0) return Promise.resolve();
  return db
    .updateTable('workflow_artifacts')
    .set({ issue })
    .where('id', '=', sql<string>`any(${artifactIds}::uuid[])`)
    .execute()
    .then(() => undefined);
}
