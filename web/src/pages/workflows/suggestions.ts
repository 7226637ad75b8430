// An instance's automatic moves, as the suggestions card shows them: which may still be undone,
// and where each went. Pure: tested alone.
import type { Schemas } from '../../api/client';

type Suggestion = Schemas['Suggestion'];

/** An auto-executed transition that may still be undone at `now`. */
export function undoable(s: Suggestion, windowMinutes: number, now: number): boolean {
  if (!s.autoExecuted || s.actionType !== 'TRANSITION' || s.undoneAt || !s.executedAt) return false;
  return Date.parse(s.executedAt) + windowMinutes * 60_000 > now;
}

/** Where an automatic move went (its action's target state). */
export const targetOf = (s: Suggestion): string => {
  const t = s.actions[0]?.params.targetState;
  return typeof t === 'string' ? t : 'the next state';
};
