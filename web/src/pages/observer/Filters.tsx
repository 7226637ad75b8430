// The timeline's filters: event type, instance, time range, full-text search and order. The
// search box is applied a moment after typing stops (the page debounces it).
import { useId } from 'react';
import type { Schemas } from '../../api/client';
import { NO_FILTER, type Order, type TimelineFilter } from '../../lib/timeline';

interface Props {
  filter: TimelineFilter;
  onChange: (f: TimelineFilter) => void;
  types: string[];
  instances: Schemas['Instance'][];
}

export function Filters({ filter, onChange, types, instances }: Props) {
  const id = useId();
  const set = (patch: Partial<TimelineFilter>) => onChange({ ...filter, ...patch });
  const any = JSON.stringify({ ...filter, order: 'desc' }) !== JSON.stringify(NO_FILTER);
  return (
    <form
      role="search"
      aria-label="Timeline filters"
      className="filters"
      onSubmit={(e) => e.preventDefault()}
    >
      <label className="wide-field">
        Search timeline
        <input
          type="search"
          value={filter.q}
          maxLength={200}
          placeholder="every word, any case"
          onChange={(e) => set({ q: e.target.value })}
        />
      </label>
      <label>
        <span id={`${id}-type`}>Event type</span>
        <select
          aria-labelledby={`${id}-type`}
          value={filter.eventType}
          onChange={(e) => set({ eventType: e.target.value })}
        >
          <option value="">All</option>
          {types.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <label>
        <span id={`${id}-instance`}>Instance</span>
        <select
          aria-labelledby={`${id}-instance`}
          value={filter.instanceId}
          onChange={(e) => set({ instanceId: e.target.value })}
        >
          <option value="">All</option>
          {instances.map((i) => (
            <option key={i.id} value={String(i.id)}>
              {i.name} (#{i.id})
            </option>
          ))}
        </select>
      </label>
      <label>
        From
        <input
          type="datetime-local"
          step={1}
          value={filter.from}
          onChange={(e) => set({ from: e.target.value })}
        />
      </label>
      <label>
        To
        <input
          type="datetime-local"
          step={1}
          value={filter.to}
          onChange={(e) => set({ to: e.target.value })}
        />
      </label>
      <label>
        <span id={`${id}-order`}>Order</span>
        <select
          aria-labelledby={`${id}-order`}
          value={filter.order}
          onChange={(e) => set({ order: e.target.value as Order })}
        >
          <option value="desc">Newest first</option>
          <option value="asc">Oldest first</option>
        </select>
      </label>
      <button
        type="button"
        className="secondary"
        disabled={!any}
        onClick={() => onChange({ ...NO_FILTER, order: filter.order })}
      >
        Clear filters
      </button>
    </form>
  );
}
