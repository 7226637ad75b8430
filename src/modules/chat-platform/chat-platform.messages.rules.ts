// What the chat reads: the `text` of a command's answer, of a refusal, of a workflow
// notification and of a chat turn's replies, each at most 2000 characters (a chat message's limit), cut at a line or word end
// with an ellipsis. Pure.
import type { Problem } from '../../platform/http/problem.js';
import type { TimelineEvent } from '../timeline/index.js';
import type {
  Advanced,
  Approval,
  Artifact,
  Run,
  Task,
  WorkflowInstance,
  WorkflowNotice,
} from '../workflows/index.js';
import type { CommandName } from './chat-platform.commands.rules.js';

export const MAX_TEXT = 2000;
const ELLIPSIS = '…';

/** At most `max` characters (code points, so no surrogate pair is split): a longer text is cut at
 * the last line break, else the last space, in its final fifth, and ends with `…`. */
export function clip(text: string, max = MAX_TEXT): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  const head = chars.slice(0, max - 1).join('');
  const floor = Math.floor(head.length * 0.8);
  const cut = Math.max(head.lastIndexOf('\n'), head.lastIndexOf(' '));
  return (cut >= floor ? head.slice(0, cut).trimEnd() : head) + ELLIPSIS;
}

/** One line: newlines and runs of spaces folded, at most `max` characters. */
function line(text: string, max = 200): string {
  return clip(text.replace(/\s+/g, ' ').trim(), max);
}

const name = (i: { id: string; context?: Record<string, unknown> }) =>
  typeof i.context?.title === 'string' && i.context.title.trim() ? `"${line(i.context.title, 100)}"` : i.id;

const GUARD_WORDS: Record<string, string> = {
  approval: "the observer's approval",
  evidence: 'evidence (tests or a demo)',
};

/** `triage → execution (needs the observer's approval)` style exits, or that there are none. */
export function exitsText(instance: Pick<WorkflowInstance, 'allowedTransitions' | 'archivedAt'>): string {
  if (instance.archivedAt !== null) return 'Completed: no further transitions.';
  if (!instance.allowedTransitions.length) return 'No exits from this state.';
  const exits = instance.allowedTransitions.map((t) => {
    if (t.guard === null) return t.to;
    if (t.satisfied) return `${t.to} (${t.guard}: satisfied)`;
    return `${t.to} (needs ${t.missing.map((m) => GUARD_WORDS[m] ?? m).join(' and ')})`;
  });
  return `Next: ${exits.join(' · ')}`;
}

/** The instance's headline, checklist and exits. */
export function instanceText(i: WorkflowInstance): string {
  const lines = [
    `Workflow ${name(i)} (${i.machineId}) is in **${i.state}** (visit ${i.stateVisit}, version ${i.version}).`,
  ];
  if (i.archivedAt === null && i.checklist.length) lines.push(`Checklist: ${i.checklist.join('; ')}`);
  if (i.activeRunId !== null) lines.push(`Orchestrator run ${i.activeRunId} is active.`);
  lines.push(exitsText(i));
  return lines.join('\n');
}

function advancedText(advanced: Advanced): string | null {
  return advanced ? `Advanced automatically: ${advanced.from} → ${advanced.to} (${advanced.guard}).` : null;
}

const joinLines = (...lines: (string | null)[]) => lines.filter((l) => l !== null).join('\n');

function artifactLine(a: Artifact): string {
  return `- ${line(a.summary || '(no summary)', 120)} [${a.status}, ${a.reviewStatus}] (${a.id})`;
}

function taskText(t: Task): string {
  const who = t.assignedPersonaId !== null ? `persona ${t.assignedPersonaId}` : (t.assignedHuman ?? 'nobody');
  return `Task "${line(t.title, 200)}" is ${t.status}, assigned to ${who}.`;
}

function runText(r: Run): string {
  return `Orchestrator run ${r.id} is ${r.status} (trigger ${r.trigger}; tasks ${r.progress.completed}/${r.progress.total} done, ${r.progress.failed} failed).`;
}

function artifactText(a: Artifact): string {
  const head = joinLines(
    `Artifact ${a.id} [${a.status}, ${a.reviewStatus}]: ${line(a.summary || '(no summary)')}`,
    a.reviewNotes ? `Review notes: ${line(a.reviewNotes)}` : null,
  );
  if (!a.content) return head;
  // The content gets what is left of the message; clip() at the end keeps the total in bounds.
  return `${head}\n\n${clip(a.content, Math.max(MAX_TEXT - Array.from(head).length - 2, 1))}`;
}

/** Each command's result, as the REST route answers it. */
export interface CommandResults {
  'observer-instance': WorkflowInstance;
  'observer-transition': WorkflowInstance;
  'observer-approve': { approval: Approval; instance: WorkflowInstance; advanced: Advanced };
  'observer-evidence': { evidence: TimelineEvent; instance: WorkflowInstance; advanced: Advanced };
  'observer-artifacts': { artifacts: Artifact[] };
  'observer-assign': Task;
  'observer-artifact-view': Artifact;
  'observer-artifact-review': { artifact: Artifact; instance: WorkflowInstance; advanced: Advanced };
  'observer-orchestrate': Run;
}

const FORMAT: { [C in CommandName]: (result: CommandResults[C]) => string } = {
  'observer-instance': instanceText,
  'observer-transition': (i) => joinLines(`Moved to **${i.state}**.`, instanceText(i)),
  'observer-approve': (r) =>
    joinLines(
      `Approval recorded for ${r.approval.state} by ${line(r.approval.approvedByName, 100)}.`,
      advancedText(r.advanced),
      instanceText(r.instance),
    ),
  'observer-evidence': (r) =>
    joinLines(
      `Evidence recorded: ${line(r.evidence.eventText)}`,
      advancedText(r.advanced),
      instanceText(r.instance),
    ),
  'observer-artifacts': ({ artifacts }) =>
    artifacts.length
      ? [`${artifacts.length} artifact(s):`, ...artifacts.map(artifactLine)].join('\n')
      : 'No artifacts yet.',
  'observer-assign': taskText,
  'observer-artifact-view': artifactText,
  'observer-artifact-review': (r) =>
    joinLines(
      `Artifact ${r.artifact.id} ${r.artifact.reviewStatus}.`,
      advancedText(r.advanced),
      instanceText(r.instance),
    ),
  'observer-orchestrate': runText,
};

/** The `text` of a command's answer (≤ 2000). */
export function commandText<C extends CommandName>(command: C, result: CommandResults[C]): string {
  return clip(FORMAT[command](result));
}

/** The `text` of a refusal (≤ 2000): its detail, the fields at fault, what may be done instead,
 * and the command's usage when the arguments were wrong. */
export function problemText(problem: Problem, usage?: string): string {
  const lines = [`${problem.title}: ${line(problem.detail, 600)}`];
  const errors = Array.isArray(problem.errors)
    ? (problem.errors as { path?: unknown; message?: unknown }[])
    : [];
  for (const e of errors.slice(0, 10)) lines.push(`- ${String(e.path)}: ${line(String(e.message), 200)}`);
  if (errors.length > 10) lines.push(`- and ${errors.length - 10} more`);
  if (Array.isArray(problem.allowed))
    lines.push(problem.allowed.length ? `Allowed: ${problem.allowed.join(', ')}` : 'No move is allowed.');
  if (usage) lines.push(`Usage: ${usage}`);
  return clip(lines.join('\n'));
}

/** The answer to a message from a platform user linked to no account. */
export function linkAccountText(platformUserId: string): string {
  return `Link your account first: ask an administrator to link chat-platform user ${platformUserId} to your account, then write again.`;
}

/** A chat turn's replies as one message (≤ 2000): the text alone when one speaker answers, each
 * reply under its speaker's name when several do (a conversation with characters). */
export function repliesText(replies: readonly { npcName: string; text: string }[]): string {
  if (replies.length === 1) return clip(replies[0]!.text);
  return clip(replies.map((r) => `**${line(r.npcName, 100)}**: ${r.text}`).join('\n\n'));
}

/** What a workflow event posts to the instance's channel (≤ 2000), or null for the events a
 * channel is not told about (checklists, per-task progress, artifact drafts). */
export function notificationText(n: WorkflowNotice): string | null {
  const m = n.event.metadata;
  const who = n.title ? `"${line(n.title, 100)}"` : n.instanceId;
  const tag = `[${n.machineId}] ${who}`;
  const text = (() => {
    switch (n.event.eventType) {
      case 'workflow_instance_created':
        return `${tag}: created in **${String(m.state)}** (${n.instanceId}).`;
      case 'workflow_transition':
        return `${tag}: ${String(m.from)} → **${String(m.to)}**${m.auto === true ? ' (automatic)' : ''}.`;
      case 'workflow_approval':
        return `${tag}: ${line(n.event.eventText)}.`;
      case 'verification_evidence': {
        const url = typeof m.proofUrl === 'string' ? ` <${m.proofUrl}>` : '';
        return `${tag}: evidence for ${String(m.state)}: ${line(n.event.eventText)}${url}`;
      }
      case 'workflow_execution_started':
        return `${tag}: execution starts in **${String(m.state)}**${typeof m.runId === 'string' ? ` (orchestrator run ${m.runId})` : ''}.`;
      case 'workflow_artifacts_collected': {
        const list = Array.isArray(m.artifacts)
          ? (m.artifacts as { id?: string; summary?: string; reviewStatus?: string }[])
          : [];
        return [
          `${tag}: ${list.length} artifact(s) collected in **${String(m.state)}**:`,
          ...list.map((a) => `- ${line(a.summary || '(no summary)', 120)} [${a.reviewStatus}] (${a.id})`),
        ].join('\n');
      }
      case 'workflow_run_finished':
      case 'workflow_artifact_reviewed':
        return `${tag}: ${line(n.event.eventText)}.`;
      case 'workflow_completed':
        return `${tag}: completed and archived.`;
      default:
        return null;
    }
  })();
  return text === null ? null : clip(text);
}
