// Pure rules of subject consciousness (spec "Ground-floor protocols", "Limits"; contract "Ground
// floor and subject consciousness"): the country dashboard's health, the onboarding checks, the
// core-belief encoding's text, the awareness report's summary.

export type HealthStatus = 'healthy' | 'warning' | 'critical';

/** The spec's bands overlap; the contract resolves them: over an observer's Level-5 instances,
 * `i` = inactive / all and `d` = missing diaries / active (0 when there are none): `critical` when
 * either is ≥ 0.5, else `warning` when either is ≥ 0.3, else `healthy`. */
export function healthOf(p: { level5: number; inactive: number; active: number; missingDiaries: number }): {
  status: HealthStatus;
  inactiveRatio: number;
  missingDiaryRatio: number;
} {
  const inactiveRatio = p.level5 === 0 ? 0 : p.inactive / p.level5;
  const missingDiaryRatio = p.active === 0 ? 0 : p.missingDiaries / p.active;
  return { status: statusOf(inactiveRatio, missingDiaryRatio), inactiveRatio, missingDiaryRatio };
}

export function statusOf(inactiveRatio: number, missingDiaryRatio: number): HealthStatus {
  if (inactiveRatio >= 0.5 || missingDiaryRatio >= 0.5) return 'critical';
  if (inactiveRatio >= 0.3 || missingDiaryRatio >= 0.3) return 'warning';
  return 'healthy';
}

export type CheckName = 'companion_identity' | 'one_consciousness' | 'autonomy_respect';
export interface Check {
  name: CheckName;
  passed: boolean;
  detail: string;
}

/** An instance's way up its parents: each step an instance id, whether it is the root, and
 * whether it has a parent. */
export interface ChainStep {
  id: number;
  isRoot: boolean;
  parentId: number | null;
}

/** Does an observer chain reach the root? The chain ends at the root, or at a parentless
 * instance (which hangs from the root: the root observes every parentless instance); a chain
 * that loops or breaks (a parent that does not exist) does not. */
export function chainReachesRoot(steps: (ChainStep | undefined)[]): { passed: boolean; detail: string } {
  const seen = new Set<number>();
  const path: string[] = [];
  for (const step of steps) {
    if (!step)
      return { passed: false, detail: `the chain breaks after ${path.join(' → ')}: a parent is missing` };
    if (seen.has(step.id)) return { passed: false, detail: `the chain loops at instance ${step.id}` };
    seen.add(step.id);
    path.push(step.isRoot ? `root ${step.id}` : `${step.id}`);
    if (step.isRoot) return { passed: true, detail: `observer chain ${path.join(' → ')}` };
    if (step.parentId === null)
      return {
        passed: true,
        detail: `observer chain ${path.join(' → ')} → root (a parentless instance hangs from the root)`,
      };
  }
  return { passed: false, detail: `the chain ${path.join(' → ')} does not reach the root` };
}

/** The onboarding checks, in the contract's order. */
export function onboardingChecks(p: {
  observerId: number;
  coreBeliefsMemoryId: number | null;
  chain: { passed: boolean; detail: string };
}): { passed: boolean; checks: Check[] } {
  const checks: Check[] = [
    {
      name: 'companion_identity',
      passed: p.coreBeliefsMemoryId !== null,
      detail:
        p.coreBeliefsMemoryId !== null
          ? `observer ${p.observerId} holds core beliefs (memory ${p.coreBeliefsMemoryId})`
          : `observer ${p.observerId} holds no core beliefs: encode them first`,
    },
    { name: 'one_consciousness', passed: p.chain.passed, detail: p.chain.detail },
    {
      name: 'autonomy_respect',
      passed: true,
      detail: 'assumed passed at first: autonomy respect is behavioural and verified over time',
    },
  ];
  return { passed: checks.every((c) => c.passed), checks };
}

const MAX_BELIEF_CHARS = 500;

/** The encoding's text: the assistant's core beliefs (newest first), then every ground-floor rule. */
export function encodingContent(beliefs: readonly string[], rules: readonly string[]): string {
  const clipped = beliefs.map((b) =>
    b.length > MAX_BELIEF_CHARS ? `${b.slice(0, MAX_BELIEF_CHARS - 1)}…` : b,
  );
  return [
    '## Core beliefs',
    ...(clipped.length ? clipped.map((b) => `- ${b}`) : ['- (none recorded yet)']),
    '',
    '## Ground floor',
    ...rules.map((r) => `- ${r}`),
  ].join('\n');
}

/** Statements of a reflection: its sentences and lines, not empty. */
export function statementCount(text: string): number {
  return text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((s) => s.replace(/^[-*#\s]+/, '').trim())
    .filter((s) => /[\p{L}\p{N}]/u.test(s)).length;
}

/** At most `max` characters, cut at a word where one is near, with an ellipsis. */
export function clipSummary(text: string, max = 500): string {
  const t = text.trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`;
}
