// The workflow definitions, as data (contract "Workflows"): stored with their version at start,
// never edited (a change ships as a new id, `_v2`), and run by XState (workflows.rules.ts). Each
// comes with its workflow protocol, seeded into the protocols module's records.

export const GUARDS = ['observerApproval', 'testsOrDemoAttached'] as const;
export type GuardName = (typeof GUARDS)[number];

export const ACTIONS = ['announceExecutionStart', 'collectArtifacts'] as const;
export type ActionName = (typeof ACTIONS)[number];

export interface StateDefinition {
  name: string;
  terminal: boolean;
  /** Emitted (`workflow_checklist`) on every entry. */
  checklist: string[];
  /** Run on every entry, in order. */
  actions: ActionName[];
}

export interface TransitionDefinition {
  from: string;
  to: string;
  guard: GuardName | null;
}

export interface WorkflowDefinition {
  machineId: string;
  version: number;
  protocolId: string;
  initial: string;
  states: StateDefinition[];
  /** A state's first exit is its forward one; at most one exit of a state is guarded. */
  transitions: TransitionDefinition[];
}

/** The contract's entry checklists, in the order of the states of both flows. */
const CHECKLISTS = [
  ['Capture the goal', 'Break the work into tasks'],
  ['Review tasks and assignees', "Get the observer's approval"],
  ['Run the tasks', 'Review every artifact', 'Attach tests or a demo'],
  ['Merge approved artifacts', "Get the observer's sign-off"],
  [],
];

/** Both flows have one shape: four working states and `completed`, the forward path guarded as
 * the contract says, and two rework exits (third → second, fourth → third). */
function flow(machineId: string, protocolId: string, names: [string, string, string, string]) {
  const [first, second, third, fourth] = names;
  const actions: ActionName[][] = [[], [], ['announceExecutionStart'], ['collectArtifacts'], []];
  const all = [...names, 'completed'];
  return {
    machineId,
    version: Number(/_v(\d+)$/.exec(machineId)![1]),
    protocolId,
    initial: first,
    states: all.map((name, i) => ({
      name,
      terminal: name === 'completed',
      checklist: CHECKLISTS[i]!,
      actions: actions[i]!,
    })),
    transitions: [
      { from: first, to: second, guard: null },
      { from: second, to: third, guard: 'observerApproval' },
      { from: third, to: fourth, guard: 'testsOrDemoAttached' },
      { from: third, to: second, guard: null },
      { from: fourth, to: 'completed', guard: 'observerApproval' },
      { from: fourth, to: third, guard: null },
    ],
  } satisfies WorkflowDefinition;
}

export const WORKFLOW_DEFINITIONS: readonly WorkflowDefinition[] = [
  flow('documentation_flow_v1', 'observer_onboarding_v1', ['intake', 'triage', 'execution', 'integration']),
  flow('triage_flow_v1', 'triage_support_v1', [
    'triage_intake',
    'tooling_analysis',
    'execution_fix',
    'stabilization',
  ]),
];

/** The workflow protocols (spec "Protocol merge": combined with a routing protocol, they add the
 * workflow's rules and state). Reference-based on the assistant's base template. */
export const WORKFLOW_PROTOCOLS = [
  {
    id: 'observer_onboarding_v1',
    kind: 'reference' as const,
    base: 'assistant_base_v1',
    name: 'Observer onboarding (documentation flow)',
    description:
      'Workflow protocol of documentation_flow_v1: intake, triage, execution, integration, completed.',
    tone: 'clear and structured',
    rules: [
      'Follow the documentation flow: capture the goal, break it into tasks, build, then integrate.',
      "Leave triage only with the observer's approval, and execution only with tests or a demo attached.",
      'Name the current state and what it still needs when asked about progress.',
    ],
    tools: ['*'],
    overrides: {},
    capabilities: { memoryAccess: 'standard' as const, adminAccess: false, observer: false },
    workflow: { machineId: 'documentation_flow_v1' },
  },
  {
    id: 'triage_support_v1',
    kind: 'reference' as const,
    base: 'assistant_base_v1',
    name: 'Triage support (triage flow)',
    description:
      'Workflow protocol of triage_flow_v1: triage intake, tooling analysis, fix, stabilization, completed.',
    tone: 'calm, precise and diagnostic',
    rules: [
      'Follow the triage flow: capture the problem, analyse the tooling, fix it, then stabilise.',
      "Start the fix only with the observer's approval, and stabilise only with tests or a demo attached.",
      'Report the current state and what it still needs when asked about progress.',
    ],
    tools: ['*'],
    overrides: {},
    capabilities: { memoryAccess: 'standard' as const, adminAccess: false, observer: false },
    workflow: { machineId: 'triage_flow_v1' },
  },
];
