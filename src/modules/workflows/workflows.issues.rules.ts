// The issue filed for collected artifacts, as pure rules: its title and Markdown body, and what an
// attempt's outcome makes of it.

/** What the issue tells: the instance, the state it entered and the artifacts it collected. */
export interface IssueSubject {
  instanceId: string;
  machineId: string;
  /** The instance's `context.title`, when it has one. */
  title: string | null;
  state: string;
  stateVisit: number;
  artifacts: { id: string; summary: string; reviewStatus: string }[];
}

/** Where the links point: the API (PUBLIC_URL) and the web console (APP_URL). */
export interface IssueLinks {
  publicUrl: string;
  appUrl: string;
}

const TITLE_CHARS = 200;
const SUMMARY_CHARS = 200;
/** Artifacts listed one by one; more are counted (GitHub refuses a body over 65,536 characters). */
const LISTED = 100;

/** Model-written text quoted in an issue: `@name` would notify that GitHub user, so a zero-width
 * space keeps it from being a mention; line breaks would break the list item. */
function quoted(text: string, max: number): string {
  const one = text.replace(/\s+/g, ' ').trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return cut.replace(/@/g, '@\u200b');
}

export function issueText(s: IssueSubject, links: IssueLinks): { title: string; body: string } {
  const name = s.title ? `"${quoted(s.title, TITLE_CHARS)}"` : s.instanceId;
  const title = `Artifacts of workflow ${name} at ${s.state} (${s.artifacts.length})`;
  const items = s.artifacts
    .slice(0, LISTED)
    .map(
      (a) =>
        `- ${quoted(a.summary, SUMMARY_CHARS) || '(no summary)'} (review: ${a.reviewStatus}): ` +
        `${links.publicUrl}/api/protocol/artifacts/${a.id}`,
    );
  if (s.artifacts.length > LISTED) items.push(`- … and ${s.artifacts.length - LISTED} more`);
  const body = [
    `Workflow instance \`${s.instanceId}\` (\`${s.machineId}\`) entered \`${s.state}\` ` +
      `(visit ${s.stateVisit}) and collected ${s.artifacts.length} artifact(s).`,
    '',
    ...(items.length ? items : ['(no artifacts)']),
    '',
    `Instance: ${links.publicUrl}/api/protocol/instances/${s.instanceId}`,
    `Console: ${links.appUrl}/workflows`,
  ].join('\n');
  return { title: title.length > 256 ? `${title.slice(0, 255)}…` : title, body };
}

/** What one attempt makes of the issue: created, failed for good (a refusal another attempt
 * would meet again, or the last attempt), or to be retried. */
export function issueAttemptResult(
  outcome: { kind: 'created' } | { kind: 'failed'; retryable: boolean },
  finalAttempt: boolean,
): 'created' | 'failed' | 'retry' {
  if (outcome.kind === 'created') return 'created';
  return outcome.retryable && !finalAttempt ? 'retry' : 'failed';
}
