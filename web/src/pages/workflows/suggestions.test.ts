import { describe, expect, it } from 'vitest';
import type { Schemas } from '../../api/client';
import { targetOf, undoable } from './suggestions';

const at = Date.parse('2025-01-01T12:00:00Z');
const move = (over: Partial<Schemas['Suggestion']> = {}) =>
  ({
    autoExecuted: true,
    actionType: 'TRANSITION',
    undoneAt: null,
    executedAt: '2025-01-01T12:00:00Z',
    actions: [{ type: 'TRANSITION', label: 'Move to triage', params: { targetState: 'triage' } }],
    ...over,
  }) as Schemas['Suggestion'];

describe('automatic moves', () => {
  it('may be undone within the window only', () => {
    expect(undoable(move(), 5, at + 4 * 60_000)).toBe(true);
    expect(undoable(move(), 5, at + 5 * 60_000)).toBe(false);
  });

  it('are no automatic move when chosen by hand, undone already, or not a transition', () => {
    expect(undoable(move({ autoExecuted: false }), 5, at)).toBe(false);
    expect(undoable(move({ undoneAt: '2025-01-01T12:01:00Z' }), 5, at)).toBe(false);
    expect(undoable(move({ actionType: 'REVIEW' }), 5, at)).toBe(false);
  });

  it('name where they went', () => {
    expect(targetOf(move())).toBe('triage');
    expect(targetOf(move({ actions: [] }))).toBe('the next state');
  });
});
