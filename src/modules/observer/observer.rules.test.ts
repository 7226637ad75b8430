// The observer's pure rules: RFC 4180 fields with the formula guard, the reflection's prompt and
// clipping, and the offline digest.
import { describe, expect, it } from 'vitest';
import type { TimelineEvent } from '../timeline/index.js';
import { clip, csvField, csvHeader, csvRecord, offlineDigest, reflectionPrompt } from './observer.rules.js';

const event = (over: Partial<TimelineEvent>): TimelineEvent => ({
  id: 1,
  userId: null,
  eventType: 'note',
  eventText: '',
  source: 'system',
  instanceId: null,
  observerId: 7,
  personaId: null,
  metadata: {},
  occurredAt: '2026-01-01T10:00:00.000Z',
  timelineAt: '2026-01-01T10:00:00.000Z',
  ...over,
});

describe('csvField', () => {
  it.each([
    [null, true, ''],
    ['', true, ''],
    ['plain', true, 'plain'],
    [42, false, '42'],
    ['a,b', true, '"a,b"'],
    ['say "hi"', true, '"say ""hi"""'],
    ['two\nlines', true, '"two\nlines"'],
    ['crlf\r\nend', true, '"crlf\r\nend"'],
    ['=1+1', true, "'=1+1"],
    ['+1', true, "'+1"],
    ['-1', true, "'-1"],
    ['@SUM(A1)', true, "'@SUM(A1)"],
    ['=a,b', true, `"'=a,b"`],
    ['-1', false, '-1'],
    [' =1', true, ' =1'],
    ['a=1', true, 'a=1'],
  ] as const)('%j (guard %s) → %j', (value, guard, expected) =>
    expect(csvField(value, guard)).toBe(expected),
  );
});

describe('csvRecord', () => {
  it('the columns in order, CRLF-terminated, nulls empty, metadata compact', () => {
    expect(csvHeader()).toBe(
      'id,timelineAt,occurredAt,eventType,source,instanceId,observerId,personaId,userId,eventText,metadata\r\n',
    );
    expect(
      csvRecord(event({ id: 5, eventText: '=HYPERLINK("x")', metadata: { a: [1, 'b'] }, personaId: 3 })),
    ).toBe(
      '5,2026-01-01T10:00:00.000Z,2026-01-01T10:00:00.000Z,note,system,,7,3,,"\'=HYPERLINK(""x"")","{""a"":[1,""b""]}"\r\n',
    );
  });
});

describe('clip', () => {
  it('keeps short text, cuts long text at a word end by code point', () => {
    expect(clip('  short  ', 10)).toBe('short');
    expect(clip('one two three four', 16)).toBe('one two three…');
    expect(clip('one two three four', 12)).toBe('one two thr…');
    expect(Array.from(clip('😀'.repeat(20), 10))).toHaveLength(10);
  });
});

describe('the reflection prompt and the offline digest', () => {
  const events = [
    event({ id: 1, eventType: 'trade', eventText: 'Sold a lantern', timelineAt: '2026-01-01T10:00:00.000Z' }),
    event({
      id: 2,
      eventType: 'note',
      eventText: 'Dusk',
      instanceId: 4,
      timelineAt: '2026-01-01T11:00:00.000Z',
    }),
    event({ id: 3, eventType: 'trade', eventText: 'Bought\nrope', timelineAt: '2026-01-01T12:00:00.000Z' }),
  ];

  it('lists each event on a line, oldest first', () => {
    expect(reflectionPrompt('Watcher', events)).toBe(
      'Observer "Watcher": 3 timeline events from 2026-01-01T10:00:00.000Z to 2026-01-01T12:00:00.000Z.\n\n' +
        '- 2026-01-01T10:00:00.000Z trade (system): Sold a lantern\n' +
        '- 2026-01-01T11:00:00.000Z note (system instance 4): Dusk\n' +
        '- 2026-01-01T12:00:00.000Z trade (system): Bought rope',
    );
  });

  it('the digest: the count and window, counts per type, the latest texts, newest first; the same for the same events', () => {
    const digest = offlineDigest(events);
    expect(digest).toBe(
      'Offline digest (no model was called) of 3 events from 2026-01-01T10:00:00.000Z to 2026-01-01T12:00:00.000Z.\n' +
        'By type: trade 2, note 1.\n' +
        'Latest:\n' +
        '- 2026-01-01T12:00:00.000Z trade: Bought\nrope\n' +
        '- 2026-01-01T11:00:00.000Z note: Dusk\n' +
        '- 2026-01-01T10:00:00.000Z trade: Sold a lantern',
    );
    expect(offlineDigest([...events])).toBe(digest);
    expect(offlineDigest([])).toBe('Offline digest: no events.');
    const many = Array.from({ length: 500 }, (_, i) => event({ id: i, eventText: 'x'.repeat(1000) }));
    expect(offlineDigest(many).length).toBeLessThanOrEqual(4000);
  });
});
