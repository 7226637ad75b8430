// The pure suggestion rules: the auto-execution decision (every action type × every config flag,
// and the order of its four steps), the status machine, ttl expiry, the order and the cap, context
// ids, the trigger table and the intent keywords.
import { describe, expect, it } from 'vitest';
import { keywordIntent, parseIntentAnswer } from './suggestions.intent.rules.js';
import {
  ACTION_TYPES,
  autoExecutableFlag,
  autoExecute,
  blocksKey,
  decideResponse,
  decisions,
  DEFAULT_CONFIG,
  parseContextId,
  SAFETY_OF,
  STATUSES,
  topSuggestions,
  ttlElapsed,
  type ActionType,
  type AutoExecutionConfig,
  type SuggestionStatus,
} from './suggestions.rules.js';
import { instanceCandidates, type InstanceFacts } from './suggestions.triggers.rules.js';

describe('autoExecute: every action type × every config flag', () => {
  // Each config flag changed alone from the defaults (the list flags naming the action's type).
  const variants: [string, (t: ActionType) => AutoExecutionConfig][] = [
    ['defaults', () => DEFAULT_CONFIG],
    ['autoRunOrchestrator off', () => ({ ...DEFAULT_CONFIG, autoRunOrchestrator: false })],
    ['autoTransitionOnGuard on', () => ({ ...DEFAULT_CONFIG, autoTransitionOnGuard: true })],
    ['autoSuggestNextStep off', () => ({ ...DEFAULT_CONFIG, autoSuggestNextStep: false })],
    ['requireConfirmationFor [type]', (t) => ({ ...DEFAULT_CONFIG, requireConfirmationFor: [t] })],
    ['neverAutoExecute [type]', (t) => ({ ...DEFAULT_CONFIG, neverAutoExecute: [t] })],
    ['undoWindowMinutes 0', () => ({ ...DEFAULT_CONFIG, undoWindowMinutes: 0 })],
  ];
  // Expected decision per variant, in the order above (T: runs by itself).
  const table: Record<ActionType, string> = {
    VIEW: 'TTTTFFT',
    SHOW_STATUS: 'TTTTFFT',
    TRANSITION: 'FFTFFFF',
    APPROVE: 'FFFFFFF',
    REVIEW: 'FFFFFFF',
    ASK_QUESTIONS: 'FFFFFFF',
    EXECUTE: 'FFFFFFF',
    CANCEL: 'FFFFFFF',
    ATTACH_EVIDENCE: 'FFFFFFF',
  };

  for (const type of ACTION_TYPES)
    variants.forEach(([name, configFor], i) => {
      const expected = table[type][i] === 'T';
      it(`${type}, ${name} → ${expected}`, () => {
        const config = configFor(type);
        const action = { type, safety: SAFETY_OF[type], autoExecutable: autoExecutableFlag(type, config) };
        expect(autoExecute(action, config)).toBe(expected);
        expect(decisions(config)[type]).toBe(expected);
      });
    });

  it('checks in the spec order: neverAutoExecute, NEVER_AUTO, requireConfirmationFor, the flag', () => {
    const on = (type: ActionType, over: Partial<AutoExecutionConfig> = {}, safety = SAFETY_OF[type]) =>
      autoExecute({ type, safety, autoExecutable: true }, { ...DEFAULT_CONFIG, ...over });
    // (1) a SAFE action listed in neverAutoExecute never runs.
    expect(on('VIEW', { neverAutoExecute: ['VIEW'] })).toBe(false);
    // (2) NEVER_AUTO blocks even a flagged action; REQUIRES_CONFIRMATION alone does not.
    for (const t of ['EXECUTE', 'CANCEL', 'ATTACH_EVIDENCE'] as const) expect(on(t)).toBe(false);
    for (const t of ['APPROVE', 'TRANSITION', 'REVIEW', 'ASK_QUESTIONS'] as const) expect(on(t)).toBe(true);
    // (3) requireConfirmationFor blocks what the class lets through.
    expect(on('TRANSITION', { requireConfirmationFor: ['TRANSITION'] })).toBe(false);
    expect(on('VIEW', { requireConfirmationFor: ['VIEW'] })).toBe(false);
    // (4) then the flag decides.
    expect(autoExecute({ type: 'VIEW', safety: 'SAFE', autoExecutable: false }, DEFAULT_CONFIG)).toBe(false);
    // A list naming another type changes nothing.
    expect(on('VIEW', { neverAutoExecute: ['EXECUTE'], requireConfirmationFor: ['APPROVE'] })).toBe(true);
  });

  it('the spec safety classes', () => {
    expect(ACTION_TYPES.filter((t) => SAFETY_OF[t] === 'SAFE')).toEqual(['VIEW', 'SHOW_STATUS']);
    expect(ACTION_TYPES.filter((t) => SAFETY_OF[t] === 'NEVER_AUTO')).toEqual([
      'EXECUTE',
      'CANCEL',
      'ATTACH_EVIDENCE',
    ]);
  });
});

describe('the status machine', () => {
  it('lets only an active suggestion be accepted or declined; staying put is no move', () => {
    const table: [SuggestionStatus, SuggestionStatus, string][] = [];
    for (const from of STATUSES)
      for (const to of ['accepted', 'declined'] as const)
        table.push([from, to, decideResponse(from, to).kind]);
    expect(table).toEqual([
      ['active', 'accepted', 'move'],
      ['active', 'declined', 'move'],
      ['accepted', 'accepted', 'stay'],
      ['accepted', 'declined', 'invalid'],
      ['declined', 'accepted', 'invalid'],
      ['declined', 'declined', 'stay'],
      ['expired', 'accepted', 'invalid'],
      ['expired', 'declined', 'invalid'],
      ['executed', 'accepted', 'invalid'],
      ['executed', 'declined', 'invalid'],
    ]);
    expect(decideResponse('active', 'declined')).toEqual({ kind: 'move' });
    expect(decideResponse('accepted', 'declined')).toEqual({ kind: 'invalid', allowed: [] });
  });

  it('blocks a key once declined, cleared or executed; never for trigger or ttl expiry', () => {
    expect(blocksKey({ status: 'declined', expiredReason: null })).toBe(true);
    expect(blocksKey({ status: 'executed', expiredReason: null })).toBe(true);
    expect(blocksKey({ status: 'expired', expiredReason: 'cleared' })).toBe(true);
    expect(blocksKey({ status: 'expired', expiredReason: 'trigger' })).toBe(false);
    expect(blocksKey({ status: 'expired', expiredReason: 'ttl' })).toBe(false);
    expect(blocksKey({ status: 'active', expiredReason: null })).toBe(false);
    expect(blocksKey({ status: 'accepted', expiredReason: null })).toBe(false);
  });
});

describe('ttl and order', () => {
  it('expires once the ttl has elapsed since the timestamp', () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    expect(ttlElapsed(t0, 3600, new Date(t0.getTime() + 3_599_999))).toBe(false);
    expect(ttlElapsed(t0, 3600, new Date(t0.getTime() + 3_600_000))).toBe(true);
  });

  it('orders by priority, confidence, newest timestamp, id; returns ten', () => {
    const at = (s: number) => new Date(1_700_000_000_000 + s * 1000);
    const rows = [
      { id: 'a', priority: 50, confidence: 0.8, timestamp: at(1) },
      { id: 'b', priority: 90, confidence: 0.5, timestamp: at(1) },
      { id: 'c', priority: 50, confidence: 0.9, timestamp: at(1) },
      { id: 'd', priority: 50, confidence: 0.8, timestamp: at(2) },
      { id: 'e', priority: 50, confidence: 0.8, timestamp: at(1) },
    ];
    expect(topSuggestions(rows).map((r) => r.id)).toEqual(['b', 'c', 'd', 'a', 'e']);
    const many = Array.from({ length: 14 }, (_, i) => ({
      id: `x${i}`,
      priority: i,
      confidence: 0.8,
      timestamp: at(0),
    }));
    expect(topSuggestions(many).map((r) => r.priority)).toEqual([13, 12, 11, 10, 9, 8, 7, 6, 5, 4]);
  });
});

describe('context ids', () => {
  it('name an instance, a conversation or a channel', () => {
    const id = '0F8A2D3E-1111-4222-8333-944445555666';
    expect(parseContextId(id)).toEqual({
      kind: 'instance',
      contextId: id.toLowerCase(),
      instanceId: id.toLowerCase(),
    });
    expect(parseContextId('conversation:42')).toEqual({
      kind: 'conversation',
      contextId: 'conversation:42',
      conversationId: 42,
    });
    expect(parseContextId('1234567890123')).toEqual({
      kind: 'channel',
      contextId: '1234567890123',
      channelId: '1234567890123',
    });
    for (const bad of ['config', 'history', 'conversation:', 'conversation:0', 'conversation:x1'])
      expect(parseContextId(bad)).toBeNull();
  });
});

describe('the trigger table', () => {
  const base: InstanceFacts = {
    id: 'i1',
    machineId: 'documentation_flow_v1',
    state: 'triage',
    stateVisit: 2,
    initial: 'intake',
    archived: false,
    forward: null,
    approver: false,
    tasks: [],
    artifacts: [],
    activeRunId: null,
  };
  const types = (f: Partial<InstanceFacts>) => instanceCandidates({ ...base, ...f }).map((c) => c.type);
  const ready = { id: 'a1', status: 'ready' as const, reviewStatus: 'pending', summary: 'Docs' };

  it('each row holds exactly when its trigger does', () => {
    const approval = { to: 'execution', guard: 'observerApproval' as const, satisfied: false };
    expect(types({ forward: approval, approver: true })).toEqual(['APPROVE_GUARD']);
    expect(types({ forward: approval, approver: false })).toEqual([]);
    expect(types({ forward: { ...approval, satisfied: true }, approver: true })).toEqual([
      'TRANSITION_STATE',
    ]);
    const evidence = { to: 'integration', guard: 'testsOrDemoAttached' as const, satisfied: false };
    expect(types({ state: 'execution', forward: evidence })).toEqual(['ATTACH_EVIDENCE']);
    expect(types({ state: 'intake', forward: { to: 'triage', guard: null, satisfied: true } })).toEqual([
      'BREAK_DOWN_TASKS',
      'TRANSITION_STATE',
    ]);
    expect(types({ state: 'intake', tasks: [{ id: 't', status: 'completed' }] })).toEqual([]);
    expect(types({ artifacts: [ready, { ...ready, id: 'a2', status: 'draft' }] })).toEqual([
      'REVIEW_ARTIFACT',
      'VIEW_ARTIFACTS',
    ]);
    expect(types({ tasks: [{ id: 't', status: 'pending' }] })).toEqual(['RUN_ORCHESTRATOR']);
    expect(types({ tasks: [{ id: 't', status: 'pending' }], activeRunId: 'r' })).toEqual([]);
    expect(types({ state: 'integration' })).toEqual(['GENERATE_DOCUMENTATION']);
    expect(types({ state: 'integration', machineId: 'triage_flow_v1' })).toEqual([]);
    // A completed instance: only its artifacts to view.
    expect(types({ archived: true, forward: approval, approver: true, artifacts: [ready] })).toEqual([
      'VIEW_ARTIFACTS',
    ]);
  });

  it('keys name the type, the target and the state visit; every suggestion offers CANCEL', () => {
    const [review] = instanceCandidates({ ...base, artifacts: [ready] });
    expect(review).toMatchObject({
      key: 'REVIEW_ARTIFACT|a1|i1@2',
      priority: 75,
      confidence: 0.8,
      actions: [
        { type: 'REVIEW', params: { artifactId: 'a1' } },
        { type: 'CANCEL', params: {} },
      ],
    });
    const [run] = instanceCandidates({
      ...base,
      tasks: [
        { id: 't2', status: 'pending' },
        { id: 't1', status: 'pending' },
      ],
    });
    expect(run!.key).toBe('RUN_ORCHESTRATOR|t1,t2|i1@2');
  });
});

describe('intent keywords', () => {
  it('a bug word first, then a development word; whole words with their endings', () => {
    expect(keywordIntent('The login is broken since Monday')).toEqual({ intent: 'bug', confidence: 0.7 });
    expect(keywordIntent('fix the build')).toEqual({ intent: 'bug', confidence: 0.7 });
    expect(keywordIntent('We need documentation for the API')).toEqual({
      intent: 'development',
      confidence: 0.7,
    });
    expect(keywordIntent('Implemented features')).toEqual({ intent: 'development', confidence: 0.7 });
    expect(keywordIntent('Hello there, debugging prefix words')).toBeNull();
    expect(keywordIntent('thanks!')).toBeNull();
  });

  it('parses the structured answer, or none', () => {
    expect(parseIntentAnswer('{"intent":"bug","confidence":0.9}')).toEqual({
      intent: 'bug',
      confidence: 0.9,
    });
    expect(parseIntentAnswer('Sure: {"intent":"development","confidence":0.6}')).toEqual({
      intent: 'development',
      confidence: 0.6,
    });
    expect(parseIntentAnswer('{"intent":"maybe","confidence":0.9}')).toEqual({
      intent: 'none',
      confidence: 0,
    });
    expect(parseIntentAnswer('no idea')).toEqual({ intent: 'none', confidence: 0 });
  });
});
