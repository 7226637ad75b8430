// Admin: a new protocol (contract "Protocols and routing"): a string-based protocol's template
// with the name, description, tone and rules given here. A new version of a family takes its
// next id (`_v2`, `_v3`); the server refuses an id of a ground-floor family, or one in use.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { FormEnd } from '../../ui';
import { ruleLines } from './protocols';

type Protocol = Schemas['Protocol'];

export function NewProtocol({
  bases,
  onCreated,
  onCancel,
}: {
  /** The protocols a new one may be based on: string-based, not of the ground floor. */
  bases: Protocol[];
  onCreated: (p: Protocol) => void;
  onCancel: () => void;
}) {
  const [form, setForm] = useState({
    id: '',
    name: '',
    base: bases[0]?.id ?? '',
    description: '',
    tone: '',
    rules: '',
  });
  const [error, setError] = useState<string | null>(null);
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => first.current?.focus(), []);
  const field = (key: 'id' | 'name' | 'description' | 'tone' | 'rules') => ({
    value: form[key],
    onChange: (e: { target: { value: string } }) => setForm({ ...form, [key]: e.target.value }),
  });

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.POST('/api/protocol/protocols', {
      body: {
        kind: 'reference',
        id: form.id.trim(),
        base: form.base,
        name: form.name.trim(),
        description: form.description,
        tone: form.tone.trim(),
        rules: ruleLines(form.rules),
        // What the server would take when left out: no tools, no overrides, standard memory.
        tools: [],
        overrides: {},
        capabilities: { memoryAccess: 'standard', adminAccess: false, observer: false },
      },
    });
    if (err || !data) return setError(describe(err));
    onCreated(data);
  }

  return (
    <form className="task-editor" aria-label="New protocol" onSubmit={(e) => void create(e)}>
      <h3>New protocol</h3>
      <div className="row wrap">
        <label className="grow">
          Protocol id
          <input ref={first} required maxLength={100} placeholder="harbour_guide_v1" {...field('id')} />
        </label>
        <label className="grow">
          Protocol name
          <input required maxLength={100} {...field('name')} />
        </label>
        <label>
          Based on
          <select value={form.base} onChange={(e) => setForm({ ...form, base: e.target.value })}>
            {bases.map((p) => (
              <option key={p.id} value={p.id}>
                {p.name} ({p.id})
              </option>
            ))}
          </select>
        </label>
      </div>
      <label>
        Protocol description
        <textarea rows={2} maxLength={2000} {...field('description')} />
      </label>
      <label>
        Tone
        <input maxLength={500} {...field('tone')} />
      </label>
      <label>
        Rules (one a line)
        <textarea rows={4} {...field('rules')} />
      </label>
      <FormEnd error={error} submit="Create protocol" onCancel={onCancel} />
    </form>
  );
}
