// A protocol's editor: its description, tone and rules (the rest of its definition kept as it is);
// a refusal is the form's alert. Ground-floor protocols are never offered to it.
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, describe, type Schemas } from '../../api/client';
import { FormEnd } from '../../ui';
import { definitionOf, ruleLines } from './protocols';

export function ProtocolEditor({
  protocol,
  onSaved,
  onCancel,
}: {
  protocol: Schemas['Protocol'];
  onSaved: (p: Schemas['Protocol']) => void;
  onCancel: () => void;
}) {
  const [description, setDescription] = useState(protocol.description);
  const [tone, setTone] = useState(protocol.tone);
  const [rules, setRules] = useState(protocol.rules.join('\n'));
  const [error, setError] = useState<string | null>(null);
  const first = useRef<HTMLTextAreaElement>(null);
  useEffect(() => first.current?.focus(), []);

  async function save(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const { data, error: err } = await api.PUT('/api/protocol/protocols/{id}', {
      params: { path: { id: protocol.id } },
      body: definitionOf(protocol, {
        description,
        tone,
        rules: ruleLines(rules),
      }),
    });
    if (err || !data) return setError(describe(err));
    onSaved(data);
  }

  return (
    <form
      className="task-editor"
      aria-label={`Edit protocol ${protocol.name}`}
      onSubmit={(e) => void save(e)}
    >
      <h3>Edit {protocol.name}</h3>
      <label>
        Protocol description
        <textarea ref={first} rows={2} value={description} onChange={(e) => setDescription(e.target.value)} />
      </label>
      <label>
        Tone
        <input value={tone} onChange={(e) => setTone(e.target.value)} />
      </label>
      <label>
        Rules (one a line)
        <textarea rows={4} value={rules} onChange={(e) => setRules(e.target.value)} />
      </label>
      <FormEnd error={error} submit="Save protocol" onCancel={onCancel} />
    </form>
  );
}
