import { describe, expect, it } from 'vitest';
import type { Schemas } from '../api/client';
import {
  countLive,
  endOfMillisecond,
  isoToLocal,
  localToIso,
  matchesFilter,
  mergeEvents,
  NO_FILTER,
  searchTerms,
  sliderTime,
  SLIDER_STEPS,
  toQuery,
  words,
} from './timeline';

function event(id: number, timelineAt: string, over: Partial<Schemas['TimelineEvent']> = {}) {
  return {
    id,
    userId: null,
    eventType: 'note',
    eventText: '',
    source: 'system',
    instanceId: null,
    observerId: 1,
    personaId: null,
    metadata: {},
    occurredAt: timelineAt,
    timelineAt,
    ...over,
  } satisfies Schemas['TimelineEvent'];
}

describe('toQuery', () => {
  it('sends only what was chosen', () => {
    expect(toQuery(NO_FILTER)).toEqual({ order: 'desc', limit: 200 });
    expect(
      toQuery(
        { ...NO_FILTER, eventType: 'trade', instanceId: '7', q: '  harbour lights ', order: 'asc' },
        50,
      ),
    ).toEqual({ order: 'asc', limit: 50, eventType: 'trade', instanceId: 7, q: 'harbour lights' });
  });

  it('sends the time range as instants with an offset', () => {
    const from = '2025-05-01T09:30';
    const q = toQuery({ ...NO_FILTER, from, to: '2025-05-01T10:00:30' });
    expect(q.from).toBe(new Date(from).toISOString());
    expect(q.from).toMatch(/Z$/);
    expect(Date.parse(q.to!) - Date.parse(q.from!)).toBe(30.5 * 60_000);
  });

  it('leaves out a time that is not one', () => {
    expect(toQuery({ ...NO_FILTER, from: 'soon' }).from).toBeUndefined();
  });
});

describe('localToIso and isoToLocal', () => {
  it('go there and back to the second', () => {
    const iso = '2025-05-01T09:30:15.000Z';
    expect(localToIso(isoToLocal(iso))).toBe(iso);
    expect(localToIso('')).toBeUndefined();
  });
});

describe('searchTerms and words', () => {
  it('reads words as the simple configuration does, any case', () => {
    expect(words("The HARBOUR's lights, again!")).toEqual(['the', 'harbour', 's', 'lights', 'again']);
  });

  it('needs every word, none of the negated, and skips or', () => {
    expect(searchTerms('Harbour  lights -quiet or lanterns')).toEqual({
      must: ['harbour', 'lights', 'lanterns'],
      not: ['quiet'],
    });
  });
});

describe('matchesFilter', () => {
  const e = event(1, '2025-05-01T09:30:00.000Z', {
    eventType: 'quest_started',
    instanceId: 5,
    eventText: 'Lights over the HARBOUR, again',
  });

  it('passes everything with no filter', () => {
    expect(matchesFilter(e, NO_FILTER)).toBe(true);
  });

  it('holds an event to its type and instance', () => {
    expect(matchesFilter(e, { ...NO_FILTER, eventType: 'quest_started' })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, eventType: 'trade' })).toBe(false);
    expect(matchesFilter(e, { ...NO_FILTER, instanceId: '5' })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, instanceId: '6' })).toBe(false);
  });

  it('takes from as inclusive and to as exclusive', () => {
    const at = isoToLocal('2025-05-01T09:30:00.000Z');
    expect(matchesFilter(e, { ...NO_FILTER, from: at })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, to: at })).toBe(false);
    expect(matchesFilter(e, { ...NO_FILTER, to: isoToLocal('2025-05-01T09:30:01.000Z') })).toBe(true);
  });

  it('searches whole words of the text, any case', () => {
    expect(matchesFilter(e, { ...NO_FILTER, q: 'harbour lights' })).toBe(true);
    expect(matchesFilter(e, { ...NO_FILTER, q: 'harb' })).toBe(false);
    expect(matchesFilter(e, { ...NO_FILTER, q: 'harbour -again' })).toBe(false);
    expect(matchesFilter(e, { ...NO_FILTER, q: 'lanterns' })).toBe(false);
  });
});

describe('mergeEvents', () => {
  const a = event(1, '2025-05-01T09:00:00.000Z');
  const b = event(2, '2025-05-01T09:00:00.000Z');
  const c = event(3, '2025-05-01T10:00:00.000Z');

  it('orders by time, then id, either way, each event once', () => {
    expect(mergeEvents([c, a], [b, a], 'asc').map((e) => e.id)).toEqual([1, 2, 3]);
    expect(mergeEvents([a], [c, b], 'desc').map((e) => e.id)).toEqual([3, 2, 1]);
  });

  it('keeps the newer copy of an event', () => {
    const edited = { ...a, eventText: 'edited' };
    expect(mergeEvents([a], [edited], 'asc')[0]!.eventText).toBe('edited');
  });

  it('merges a page onto 10,000 events: each once, newest first, the older page last', () => {
    const many = Array.from({ length: 10_000 }, (_, i) =>
      event(i + 1, new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString()),
    );
    const out = mergeEvents(many, [event(20_000, '2024-12-31T00:00:00.000Z')], 'desc');
    expect(out).toHaveLength(10_001);
    expect(out[out.length - 1]!.id).toBe(20_000);
    expect(out.slice(0, -1).map((e) => e.id)).toEqual(many.map((e) => e.id).reverse());
  });
});

describe('sliderTime', () => {
  const min = '2025-05-01T09:00:00.123Z';
  const max = '2025-05-01T10:00:00.456Z';

  it('runs from the first to the last event, each the end of its millisecond', () => {
    expect(sliderTime(min, max, 0)).toBe('2025-05-01T09:00:00.123999Z');
    expect(sliderTime(min, max, SLIDER_STEPS)).toBe('2025-05-01T10:00:00.456999Z');
    expect(Date.parse(sliderTime(min, max, SLIDER_STEPS / 2))).toBe(
      Math.round((Date.parse(min) + Date.parse(max)) / 2),
    );
  });

  it('stays within the range', () => {
    expect(sliderTime(min, max, -5)).toBe(sliderTime(min, max, 0));
    expect(sliderTime(min, max, SLIDER_STEPS + 5)).toBe(sliderTime(min, max, SLIDER_STEPS));
  });

  it('is one time for a range of one event', () => {
    expect(sliderTime(min, min, 500)).toBe(endOfMillisecond(Date.parse(min)));
  });
});

describe('countLive', () => {
  it('counts a live event in the total, the window and its type', () => {
    const s = {
      observerId: 1,
      generatedAt: '2025-05-01T09:00:00.000Z',
      windowHours: 24,
      instances: { total: 0, active: 0, inactive: 0, byLevel: {}, bySource: {}, byPersona: {} },
      events: { total: 10, inWindow: 4, bySource: {}, byType: { trade: 2 }, byLevel: {}, byPersona: {} },
      diaryCompliance: { compliant: true, missingCount: 0, windowHours: 24 },
      metaState: {
        cycles: 0,
        lastCycleAt: null,
        lastCycleOutcome: null,
        lastReflectionId: null,
        lastReflectionAt: null,
        awareness: { instances: 0, activeInstances: 0, eventsInWindow: 0 },
      },
    } satisfies Schemas['ObserverSummary'];
    const once = countLive(s, event(9, '2025-05-01T09:30:00.000Z', { eventType: 'trade' }));
    const twice = countLive(once, event(10, '2025-05-01T09:31:00.000Z', { eventType: 'note' }));
    expect(twice.events).toMatchObject({ total: 12, inWindow: 6, byType: { trade: 3, note: 1 } });
    expect(s.events.total).toBe(10);
  });
});
