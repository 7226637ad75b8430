// Pure rules of the observer (contract: "Observer"): how the timeline is written as CSV, what a
// reflection's model call is given, and the offline model's deterministic digest.
import type { TimelineEvent } from '../timeline/index.js';

// ---- CSV (RFC 4180) ---------------------------------------------------------------------------

export const CSV_COLUMNS = [
  'id',
  'timelineAt',
  'occurredAt',
  'eventType',
  'source',
  'instanceId',
  'observerId',
  'personaId',
  'userId',
  'eventText',
  'metadata',
] as const;

/** A text cell that a spreadsheet would run as a formula starts with one of these; it gets a
 * leading `'` so it is shown as text. */
const FORMULA_START = /^[=+\-@]/;

/** One RFC 4180 field: quoted when it holds a comma, a quote, CR or LF (quotes doubled). Text
 * cells (`guard`) that start like a formula get a leading `'` first. Null is empty. */
export function csvField(value: string | number | null, guard: boolean): string {
  if (value === null) return '';
  let text = String(value);
  if (guard && FORMULA_START.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const CRLF = '\r\n';

export const csvHeader = (): string => CSV_COLUMNS.join(',') + CRLF;

/** One event as a CSV record (CRLF-terminated); metadata as compact JSON. */
export function csvRecord(e: TimelineEvent): string {
  return (
    [
      csvField(e.id, false),
      csvField(e.timelineAt, false),
      csvField(e.occurredAt, false),
      csvField(e.eventType, true),
      csvField(e.source, true),
      csvField(e.instanceId, false),
      csvField(e.observerId, false),
      csvField(e.personaId, false),
      csvField(e.userId, false),
      csvField(e.eventText, true),
      csvField(JSON.stringify(e.metadata), true),
    ].join(',') + CRLF
  );
}

// ---- Reflection ---------------------------------------------------------------------------------

/** The longest reflection stored. */
export const REFLECTION_MAX_CHARS = 4000;
/** How much of one event's text a reflection's prompt carries. */
const EVENT_TEXT_IN_PROMPT = 500;

/** Clips to at most `max` characters (by code point, so no pair is split), at a word end when
 * one is near. */
export function clip(text: string, max: number): string {
  const points = Array.from(text.trim());
  if (points.length <= max) return points.join('');
  const cut = points.slice(0, max - 1).join('');
  const space = cut.lastIndexOf(' ');
  return (space > max * 0.8 ? cut.slice(0, space) : cut) + '…';
}

export const REFLECTION_SYSTEM =
  'You are the reflective voice of an observer over several instances of one assistant. You are ' +
  'given its timeline events, oldest first. Write a short reflection in plain prose (at most 300 ' +
  'words): what happened, the patterns and changes you notice, and what deserves attention next. ' +
  'Do not list the events one by one.';

/** The user part of a reflection's model call: the window and each event on a line. */
export function reflectionPrompt(observerName: string, events: TimelineEvent[]): string {
  const lines = events.map((e) => {
    const instance = e.instanceId === null ? '' : ` instance ${e.instanceId}`;
    const text = e.eventText ? `: ${clip(e.eventText.replace(/\s+/g, ' '), EVENT_TEXT_IN_PROMPT)}` : '';
    return `- ${e.timelineAt} ${e.eventType} (${e.source}${instance})${text}`;
  });
  return (
    `Observer "${observerName}": ${events.length} timeline events from ${events[0]?.timelineAt} ` +
    `to ${events.at(-1)?.timelineAt}.\n\n${lines.join('\n')}`
  );
}

/** How many of the latest events the offline digest quotes. */
const DIGEST_LATEST = 5;

/** The offline model's reflection: no language model runs, so it is a deterministic digest of
 * the events (their count and window, counts per type, the latest texts), said to be one. The
 * same events always give the same text. */
export function offlineDigest(events: TimelineEvent[]): string {
  if (events.length === 0) return 'Offline digest: no events.';
  const byType = new Map<string, number>();
  for (const e of events) byType.set(e.eventType, (byType.get(e.eventType) ?? 0) + 1);
  const counts = [...byType]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
  const latest = events
    .slice(-DIGEST_LATEST)
    .reverse()
    .map((e) => `- ${e.timelineAt} ${e.eventType}${e.eventText ? `: ${clip(e.eventText, 300)}` : ''}`);
  return clip(
    `Offline digest (no model was called) of ${events.length} events from ${events[0]!.timelineAt} ` +
      `to ${events.at(-1)!.timelineAt}.\nBy type: ${counts}.\nLatest:\n${latest.join('\n')}`,
    REFLECTION_MAX_CHARS,
  );
}
